package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stratalog/strata"
)

// recordFormat is a parsed --format, kcat's -f: literal text and the
// fields of a record.
type recordFormat struct {
	parts []formatPart
	null  string // --null-marker: written for a null key or value
}

type formatPart struct {
	verb byte   // 0 for literal text
	text string // the literal text
}

// formatVerbs are the verbs of --format, kcat's -f.
const formatVerbs = "%t topic, %p partition, %o offset, %k key, %s value, %K key length, %S value length (-1 for null), %T timestamp (ms), %h headers (k=v,k=v), %% a percent sign; \\n \\r \\t \\\\ \\xHH escapes"

// parseFormat parses a --format string.
func parseFormat(f string) (recordFormat, error) {
	var out recordFormat
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out.parts = append(out.parts, formatPart{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(f); i++ {
		c := f[i]
		switch {
		case c == '%':
			if i+1 == len(f) {
				return out, usagef("--format %q: a %% at the end (the verbs: %s)", f, formatVerbs)
			}
			i++
			v := f[i]
			switch v {
			case '%':
				lit.WriteByte('%')
			case 't', 'p', 'o', 'k', 's', 'K', 'S', 'T', 'h':
				flush()
				out.parts = append(out.parts, formatPart{verb: v})
			default:
				return out, usagef("--format %q: unknown verb %%%c (the verbs: %s)", f, v, formatVerbs)
			}
		case c == '\\' && i+1 < len(f):
			i++
			switch f[i] {
			case 'n':
				lit.WriteByte('\n')
			case 'r':
				lit.WriteByte('\r')
			case 't':
				lit.WriteByte('\t')
			case '\\':
				lit.WriteByte('\\')
			case 'x':
				if i+2 >= len(f) {
					return out, usagef("--format %q: \\x wants two hex digits", f)
				}
				b, err := strconv.ParseUint(f[i+1:i+3], 16, 8)
				if err != nil {
					return out, usagef("--format %q: \\x%s is not two hex digits", f, f[i+1:i+3])
				}
				lit.WriteByte(byte(b))
				i += 2
			default:
				lit.WriteByte('\\')
				lit.WriteByte(f[i])
			}
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return out, nil
}

// appendRecord appends r, of topic, as the format says.
func (f *recordFormat) appendRecord(dst []byte, topic string, partition int, r *strata.Record) []byte {
	for _, p := range f.parts {
		switch p.verb {
		case 0:
			dst = append(dst, p.text...)
		case 't':
			dst = append(dst, topic...)
		case 'p':
			dst = strconv.AppendInt(dst, int64(partition), 10)
		case 'o':
			dst = strconv.AppendInt(dst, r.Offset, 10)
		case 'k':
			dst = f.appendBytes(dst, r.Key)
		case 's':
			dst = f.appendBytes(dst, r.Value)
		case 'K':
			dst = appendLen(dst, r.Key)
		case 'S':
			dst = appendLen(dst, r.Value)
		case 'T':
			dst = strconv.AppendInt(dst, r.Timestamp.UnixMilli(), 10)
		case 'h':
			for i, h := range r.Headers {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, h.Key...)
				dst = append(dst, '=')
				dst = f.appendBytes(dst, h.Value)
			}
		}
	}
	return dst
}

func (f *recordFormat) appendBytes(dst, b []byte) []byte {
	if b == nil {
		return append(dst, f.null...)
	}
	return append(dst, b...)
}

func appendLen(dst, b []byte) []byte {
	if b == nil {
		return append(dst, "-1"...)
	}
	return strconv.AppendInt(dst, int64(len(b)), 10)
}

// recordJSON is a record as consume -o json writes it, one a line. A key,
// value or header value that is not valid UTF-8 is written in base64, with
// its _encoding field "base64"; a null one is null.
type recordJSON struct {
	Topic         string       `json:"topic"`
	Partition     int          `json:"partition"`
	Offset        int64        `json:"offset"`
	Timestamp     string       `json:"timestamp"`
	Key           *string      `json:"key"`
	KeyEncoding   string       `json:"key_encoding,omitempty"`
	Value         *string      `json:"value"`
	ValueEncoding string       `json:"value_encoding,omitempty"`
	Headers       []headerJSON `json:"headers"`
}

type headerJSON struct {
	Key           string  `json:"key"`
	Value         *string `json:"value"`
	ValueEncoding string  `json:"value_encoding,omitempty"`
}

// jsonBytes returns b as JSON writes it: nil for null, a string, and
// "base64" when b is not valid UTF-8.
func jsonBytes(b []byte) (*string, string) {
	if b == nil {
		return nil, ""
	}
	if utf8.Valid(b) {
		s := string(b)
		return &s, ""
	}
	s := base64.StdEncoding.EncodeToString(b)
	return &s, "base64"
}

// appendRecordJSON appends r as one line of JSON.
func appendRecordJSON(dst []byte, topic string, partition int, r *strata.Record) []byte {
	j := recordJSON{Topic: topic, Partition: partition, Offset: r.Offset, Timestamp: fmtTime(r.Timestamp), Headers: []headerJSON{}}
	j.Key, j.KeyEncoding = jsonBytes(r.Key)
	j.Value, j.ValueEncoding = jsonBytes(r.Value)
	for _, h := range r.Headers {
		hj := headerJSON{Key: h.Key}
		hj.Value, hj.ValueEncoding = jsonBytes(h.Value)
		j.Headers = append(j.Headers, hj)
	}
	b, err := json.Marshal(j)
	if err != nil {
		// Nothing in recordJSON fails to marshal.
		return fmt.Appendf(dst, "{\"error\":%q}\n", err.Error())
	}
	dst = append(dst, b...)
	return append(dst, '\n')
}
