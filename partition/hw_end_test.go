package partition

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReaderAtEndOffsetDuringFsync: under SyncAlways, while an append's
// fsync runs, its batch is past the high watermark but not past the end
// offset: tailing from EndOffset then waits, as a Kafka fetch between the
// high watermark and the log end gets no records, rather than failing
// with ErrOutOfRange.
func TestReaderAtEndOffsetDuringFsync(t *testing.T) {
	cfg := small(newClock())
	cfg.Sync = SyncAlways
	p, m := memPartition(t, cfg)
	defer p.Close()
	appendIDs(t, p, 0, 1)

	finish := appendInFsync(p, m, 2) // the append wrote its batch and is in its fsync
	defer finish()                   // before Close, which waits for the fsync
	end := p.EndOffset()
	require.Equal(t, int64(3), end)
	require.Equal(t, int64(2), p.HighWatermark())

	// Tail from the end offset, as a caller of the public API would.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var gotErr error
	for _, err := range p.Records(ctx, end) {
		gotErr = err
		break
	}
	require.NoError(t, finish())
	require.NotErrorIs(t, gotErr, ErrOutOfRange, "tailing from EndOffset() while an fsync runs: %v", gotErr)
}
