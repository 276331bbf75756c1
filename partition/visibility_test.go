package partition

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// TestSyncAlwaysHidesUnsyncedRecords: under SyncAlways a record whose fsync
// failed was written to the OS but is not durable, so no read path may
// return it: readers see only the high watermark's records.
func TestSyncAlwaysHidesUnsyncedRecords(t *testing.T) {
	cfg := small(newClock())
	cfg.Sync = SyncAlways
	p, m := memPartition(t, cfg)
	defer p.Close()
	appendIDs(t, p, 0, 1)
	m.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpSync && strings.HasSuffix(path, ".log") {
			return vfs.ErrInjected
		}
		return nil
	})
	_, err := p.Append([]log.Record{rec(2)})
	require.ErrorIs(t, err, vfs.ErrInjected)
	m.SetInjector(nil)
	require.Equal(t, int64(3), p.EndOffset(), "the batch was written")
	require.Equal(t, int64(2), p.HighWatermark(), "but it is not durable")

	got := readRange(t, p, 0)
	require.Len(t, got, 2, "a Reader stops at the high watermark")
	batches, err := p.ReadBatches(nil, 2, 1<<20)
	require.NoError(t, err)
	require.Empty(t, batches, "ReadBatches at the high watermark returns nothing")
	batches, err = p.ReadBatches(nil, 3, 1<<20)
	require.NoError(t, err, "at the end offset, past the high watermark: nothing yet, as Kafka answers")
	require.Empty(t, batches)
	_, err = p.ReadBatches(nil, 4, 1<<20)
	require.ErrorIs(t, err, ErrOutOfRange, "past the end offset is out of range")
	_, _, found, err := p.OffsetForTimestamp(0)
	require.NoError(t, err)
	require.True(t, found)
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, p.Wait(wctx, 2), context.DeadlineExceeded, "nothing visible at 2")
}

// TestReadersNeverPassTheHighWatermark: appenders race readers; every record
// a reader returns is below the high watermark read after it (under
// SyncAlways: durable), so a consumer committing what it read commits an
// offset the partition admits to.
func TestReadersNeverPassTheHighWatermark(t *testing.T) {
	for _, policy := range []SyncPolicy{SyncNever, SyncAlways} {
		t.Run(policy.String(), func(t *testing.T) {
			cfg := small(newClock())
			cfg.Sync = policy
			p, _ := memPartition(t, cfg)
			defer p.Close()
			const perWriter = 300
			var wg sync.WaitGroup
			for w := range 3 {
				wg.Go(func() {
					for i := range perWriter {
						if _, err := p.Append([]log.Record{rec(w*perWriter + i)}); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			errs := make(chan error, 4)
			for range 2 {
				wg.Go(func() {
					r := p.NewReader(0)
					defer r.Close()
					var x log.Record
					seen := 0
					wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					for seen < 3*perWriter {
						if err := r.NextWait(wctx, &x); err != nil {
							errs <- err
							return
						}
						if hw := p.HighWatermark(); x.Offset >= hw {
							errs <- errors.New("read past the high watermark")
							return
						}
						if policy == SyncAlways && x.Offset >= p.SyncedOffset() {
							errs <- errors.New("read a record before its fsync")
							return
						}
						seen++
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
		})
	}
}
