package strata_test

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
)

// logOnFailure returns a logger for the stores of a test that crashes or
// damages them on purpose: it keeps what they log (their recovery reports)
// and hands it to t.Log when the test ends failed, so that a passing test
// prints none of it. It may be written to after the test ends (a store's
// background work), and then keeps it to itself.
func logOnFailure(t testing.TB) *slog.Logger {
	b := &syncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			if logged := b.String(); logged != "" {
				t.Logf("the stores logged:\n%s", logged)
			}
		}
	})
	return slog.New(slog.NewTextHandler(b, nil))
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
