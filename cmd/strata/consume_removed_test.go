package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratalog/strata"
	"github.com/stretchr/testify/require"
)

// gateWriter blocks its first Write until release is closed, having
// closed blocked: a reader stalled mid-output.
type gateWriter struct {
	once             sync.Once
	blocked, release chan struct{}
	mu               sync.Mutex
	buf              bytes.Buffer
}

func (w *gateWriter) has(s string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Contains(w.buf.String(), s)
}

func (w *gateWriter) Write(p []byte) (int, error) {
	w.once.Do(func() {
		close(w.blocked)
		<-w.release
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// lockedBuffer is a bytes.Buffer that a command writes while the test
// reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestConsumeRecordsRemovedUnder: the directory's owner deletes records a
// consume --follow of the live directory has not read yet (delete-records
// and retention, while its output is stalled): consume says which offsets
// it lost and goes on at the new start, as a Kafka consumer with
// auto.offset.reset=earliest, instead of failing with the out-of-range
// error of a bad --offset (status 2).
func TestConsumeRecordsRemovedUnder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := strata.Open(dir, &strata.Options{RetentionCheckInterval: -1, CleanerInterval: -1})
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.CreateTopic("t", strata.TopicConfig{SegmentBytes: 4096}))
	for i := range 5000 {
		v := fmt.Sprintf("%04d-%s", i, strings.Repeat("x", 96))
		_, err := w.AppendTo(ctx, "t", 0, strata.Record{Value: []byte(v)})
		require.NoError(t, err)
	}

	out := &gateWriter{blocked: make(chan struct{}), release: make(chan struct{})}
	var stderr lockedBuffer
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &app{stdin: &bytes.Buffer{}, stdout: out, stderr: &stderr, ctx: runCtx}
	done := make(chan int)
	go func() { done <- a.run([]string{"--dir", dir, "consume", "t", "--follow"}) }()
	<-out.blocked
	require.NoError(t, w.DeleteRecords("t", 0, 4500))
	_, err = w.EnforceRetention(ctx)
	require.NoError(t, err)
	// The reader sees removals at its next look at the directory, one
	// RefreshInterval (100 ms) after its last.
	time.Sleep(3 * strata.DefaultRefreshInterval)
	close(out.release)
	for deadline := time.Now().Add(time.Minute); !out.has("4999-"); time.Sleep(10 * time.Millisecond) {
		select {
		case code := <-done:
			t.Fatalf("consume --follow ended, status %d: %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record 4999 within a minute; stderr: %s", stderr.String())
		}
	}
	cancel()
	require.Equal(t, exitOK, <-done, "stderr: %s", stderr.String())

	require.Regexp(t, `^strata: warning: t-0: offsets \d+ to 4499 were deleted \(retention, delete-records\) before they were read: going on at 4500\n$`, stderr.String())
	lines := strings.Split(strings.TrimSuffix(out.buf.String(), "\n"), "\n")
	var got []int
	for _, l := range lines {
		var n int
		_, err := fmt.Sscanf(l, "%04d-", &n)
		require.NoError(t, err, "line %q", l)
		got = append(got, n)
	}
	require.Equal(t, 0, got[0])
	require.Equal(t, 4999, got[len(got)-1])
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			require.Equal(t, 4500, got[i], "the records after the gap start at the new start")
		}
	}
}
