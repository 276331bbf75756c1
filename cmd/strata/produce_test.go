package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/stratalog/strata"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lineSource yields n lines "key<i%1000>:<value>" without holding them,
// and notes the largest live heap it sees every 8 MiB of them.
type lineSource struct {
	n, i     int
	full     bool // fill each Read's buffer, as a file does; else a line a Read, as a slow pipe
	pending  []byte
	read     int64
	nextStat int64
	maxHeap  uint64
}

func (s *lineSource) Read(p []byte) (int, error) {
	if s.read >= s.nextStat {
		s.nextStat += 8 << 20
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s.maxHeap = max(s.maxHeap, ms.HeapAlloc)
	}
	n := 0
	for n < len(p) {
		if len(s.pending) == 0 {
			if s.i == s.n {
				break
			}
			s.pending = fmt.Appendf(s.pending[:0], "key%d:%0100d\n", s.i%1000, s.i)
			s.i++
		}
		c := copy(p[n:], s.pending)
		s.pending = s.pending[c:]
		n += c
		if !s.full && len(s.pending) == 0 {
			break
		}
	}
	s.read += int64(n)
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// TestProduceStreams produces 100 MiB of lines and checks that produce
// holds a bounded part of them at a time.
func TestProduceStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MiB of records")
	}
	t.Run("reads=full", func(t *testing.T) { testProduceStreams(t, true) })
	t.Run("reads=line", func(t *testing.T) { testProduceStreams(t, false) })
}

func testProduceStreams(t *testing.T, full bool) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	a := &app{stdin: &bytes.Buffer{}, stdout: &stdout, stderr: &stderr, ctx: context.Background()}
	require.Equal(t, exitOK, a.run([]string{"--dir", dir, "topics", "create", "big", "--partitions", "6"}), stderr.String())

	src := &lineSource{n: 1 << 20, full: full} // 1 Mi lines of about 110 bytes
	a = &app{stdin: src, stdout: &stdout, stderr: &stderr, ctx: context.Background()}
	require.Equal(t, exitOK, a.run([]string{"--dir", dir, "produce", "big", "-K", ":"}), stderr.String())
	require.Contains(t, stderr.String(), fmt.Sprintf("produced %d records to big", src.n))
	t.Logf("read %d MiB; the largest live heap %d MiB", src.read>>20, src.maxHeap>>20)
	require.Less(t, src.maxHeap, uint64(48<<20), "produce holds at most a few chunks and batches of its input")
}

// TestProduceInteractive produces from a pipe that stays open, as a
// terminal does: the lines typed are appended while produce waits for
// more, and an interrupt ends it cleanly, with what it read appended.
func TestProduceInteractive(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	a := &app{stdin: &bytes.Buffer{}, stdout: &stdout, stderr: &stderr, ctx: context.Background()}
	require.Equal(t, exitOK, a.run([]string{"--dir", dir, "topics", "create", "typed"}), stderr.String())

	r, w := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a = &app{stdin: r, stdout: &stdout, stderr: &stderr, ctx: ctx}
	done := make(chan int)
	go func() { done <- a.run([]string{"--dir", dir, "produce", "typed"}) }()
	_, err := io.WriteString(w, "one\ntwo\n")
	require.NoError(t, err)

	// The two lines are appended while the input stays open.
	s, err := strata.Open(dir, &strata.Options{ReadOnly: true})
	require.NoError(t, err)
	defer s.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		end, err := s.ListOffsets("typed", 0, strata.Latest)
		require.NoError(t, err)
		if end == 2 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the typed lines were not appended within a minute")
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	require.Equal(t, exitOK, <-done, stderr.String())
	require.Contains(t, stderr.String(), "produced 2 records to typed, partition 0 (offsets 0-1) (interrupted)")
	w.Close()
}
