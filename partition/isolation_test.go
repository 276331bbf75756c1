package partition

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// ReadCommitted stops at the last stable offset, the first offset of the
// earliest open transaction, though records past it are there; its end
// moves when the transaction ends, and the committed records appear at
// once, those after them too.
func TestReadCommittedStopsAtLSO(t *testing.T) {
	for _, policy := range []SyncPolicy{SyncEvery(0), SyncAlways} {
		t.Run(policy.String(), func(t *testing.T) {
			cfg := small(newClock())
			cfg.Sync = policy
			p, _ := memPartition(t, cfg)
			defer p.Close()
			w := newTxnWriter(t, p)
			plain(t, p, "before")
			first := w.write(1, 0, 2)
			plain(t, p, "during")
			w.write(2, 0, 1)
			w.end(2, true) // a later transaction ends first: the LSO stays
			require.Equal(t, first, p.LastStableOffset())
			require.Equal(t, []string{"before"}, values(readIso(t, p, 0, ReadCommitted)))
			require.Empty(t, readIso(t, p, first, ReadCommitted))
			require.Len(t, readIso(t, p, 0, ReadUncommitted), 5)

			r := p.NewReaderIsolation(0, ReadCommitted)
			defer r.Close()
			var rec log.Record
			ok, err := r.Next(&rec)
			require.True(t, ok)
			require.NoError(t, err)
			ok, err = r.Next(&rec)
			require.False(t, ok, "at the LSO")
			require.NoError(t, err)
			require.Equal(t, first, r.Offset())

			w.end(1, true)
			require.Equal(t, p.HighWatermark(), p.LastStableOffset())
			var got []string
			for {
				ok, err := r.Next(&rec)
				require.NoError(t, err)
				if !ok {
					break
				}
				got = append(got, string(rec.Value))
			}
			require.Equal(t, []string{"p1-0", "p1-1", "during", "p2-0"}, got)
		})
	}
}

// A tailing ReadCommitted reader waits while a transaction is open, though
// records are appended after it, and wakes when the marker moves the last
// stable offset; then it skips an aborted transaction without waking for
// its records.
func TestReadCommittedTailWakesAtLSO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := memPartition(t, small(newClock()))
		defer p.Close()
		w := newTxnWriter(t, p)
		got := make(chan string)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			for rec, err := range p.RecordsIsolation(ctx, 0, ReadCommitted) {
				if err != nil {
					close(got)
					return
				}
				got <- string(rec.Value)
			}
		}()
		w.write(1, 0, 1)
		plain(t, p, "after")
		synctest.Wait()
		select {
		case v := <-got:
			t.Fatalf("read %q inside an open transaction", v)
		default:
		}
		w.end(1, true)
		require.Equal(t, "p1-0", <-got)
		require.Equal(t, "after", <-got)

		w.write(2, 0, 3)
		synctest.Wait()
		w.end(2, false)
		plain(t, p, "last")
		require.Equal(t, "last", <-got)
		cancel()
		_, open := <-got
		require.False(t, open)
	})
}

// Wait and NextWait under ReadUncommitted are not held back by an open
// transaction.
func TestReadUncommittedIgnoresLSO(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	w := newTxnWriter(t, p)
	w.write(1, 0, 1)
	require.NoError(t, p.WaitIsolation(context.Background(), 0, ReadUncommitted))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, p.WaitIsolation(ctx, 0, ReadCommitted), context.Canceled)
	require.Equal(t, ReadCommitted, p.NewReaderIsolation(0, Isolation(7)).Isolation(), "an unknown level reads committed")
	require.Equal(t, "read_committed", ReadCommitted.String())
	require.Equal(t, "read_uncommitted", ReadUncommitted.String())
	require.Equal(t, "Isolation(7)", Isolation(7).String())
}
