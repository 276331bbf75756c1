package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/stratalog/strata"
)

// chunk is some lines of the input, in the order read; first is the number
// of the first (from 1). idle says the input had nothing more buffered
// when the chunk was cut.
type chunk struct {
	lines [][]byte
	first int64
	bytes int // bytes of input the chunk took, line endings included
	idle  bool
	err   error
}

// chunkBytes is about what a chunk holds.
const chunkBytes = 256 << 10

// readLines reads r's lines, without their line endings (\n or \r\n), on a
// goroutine of its own, and sends them in chunks (each line in memory of
// its own). A line longer than limit is an error. The channel closes after
// the last chunk, or after a chunk with an error.
func readLines(r io.Reader, limit int) <-chan chunk {
	ch := make(chan chunk, 4)
	go func() {
		defer close(ch)
		br := newLineReader(r)
		next := int64(1)
		for {
			c := chunk{first: next}
			var data []byte
			for c.bytes < chunkBytes {
				line, n, err := br.line(limit)
				if err == io.EOF {
					if len(c.lines) > 0 {
						ch <- c
					}
					return
				}
				if err != nil {
					c.err = fmt.Errorf("line %d: %w", next, err)
					ch <- c
					return
				}
				if len(data)+len(line) > cap(data) {
					// More memory for the chunk's lines (the lines so
					// far keep theirs): what the input has ready, or
					// twice what the chunk has, so that a chunk cut
					// short when the input pauses takes little.
					grow := max(2*cap(data), br.Buffered()+len(line))
					data = make([]byte, 0, max(min(grow, chunkBytes), len(line), 4096))
				}
				data = append(data, line...)
				c.lines = append(c.lines, data[len(data)-len(line):len(data):len(data)])
				c.bytes += n
				next++
				if br.Buffered() == 0 {
					c.idle = true
					break
				}
			}
			ch <- c
		}
	}()
	return ch
}

// lineReader reads lines of any length up to a bound.
type lineReader struct {
	*bufio.Reader
	long []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{Reader: bufio.NewReaderSize(r, chunkBytes)}
}

// line returns the next line, without its line ending, and the bytes it
// took in the input; io.EOF after the last. The line is valid until the
// next call.
func (l *lineReader) line(limit int) ([]byte, int, error) {
	l.long = l.long[:0]
	for {
		frag, err := l.ReadSlice('\n')
		if len(l.long)+len(frag) > limit+2 {
			return nil, 0, fmt.Errorf("longer than the topic's max.message.bytes (%d): %w", limit, strata.ErrBatchTooLarge)
		}
		switch {
		case err == bufio.ErrBufferFull:
			l.long = append(l.long, frag...)
			continue
		case err == io.EOF && len(l.long)+len(frag) == 0:
			return nil, 0, io.EOF
		case err != nil && err != io.EOF:
			return nil, 0, err
		}
		line := frag
		if len(l.long) > 0 {
			l.long = append(l.long, frag...)
			line = l.long
		}
		n := len(line)
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) > limit {
			return nil, 0, fmt.Errorf("longer than the topic's max.message.bytes (%d): %w", limit, strata.ErrBatchTooLarge)
		}
		return slices.Clip(line), n, nil
	}
}

// lineHeaders parses the headers a line starts with, as
// kafka-console-producer's parse.headers does with its default separators
// (headers.delimiter a tab, headers.separator a comma, headers.key.separator
// a colon; LineMessageReader): "k1:v1,k2:v2<TAB>rest". It returns them after
// fixed, and the rest of the line. A header value equal to null is null.
func lineHeaders(line []byte, fixed []strata.Header, null string) ([]strata.Header, []byte, error) {
	hs, rest, ok := bytes.Cut(line, []byte("\t"))
	if !ok {
		return nil, nil, fmt.Errorf("no tab after the headers (with --parse-headers a line is k1:v1,k2:v2<TAB>value)")
	}
	out := slices.Clip(fixed)
	if len(hs) == 0 {
		return out, rest, nil
	}
	for _, h := range bytes.Split(hs, []byte(",")) {
		k, v, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return nil, nil, fmt.Errorf("header %q is not key:value", h)
		}
		if null != "" && string(v) == null {
			v = nil
		}
		out = append(out, strata.Header{Key: string(k), Value: v})
	}
	return out, rest, nil
}
