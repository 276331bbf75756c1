package partition

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
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
			require.Equal(t, first, p.VisibleEnd(ReadCommitted))
			require.Equal(t, p.HighWatermark(), p.VisibleEnd(ReadUncommitted))
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

// A tailing ReadCommitted reader beside a writer of transactions (two
// producers, every third one aborted, rolls in between) sees every
// committed record once, in offset order, and no aborted one.
func TestReadCommittedConcurrentWriter(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	w := newTxnWriter(t, p)
	type result struct {
		got []log.Record
		err error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		for rec, err := range p.RecordsIsolation(context.Background(), 0, ReadCommitted) {
			if err != nil || string(rec.Key) == "end" {
				res.err = err
				break
			}
			rec.Key, rec.Value = bytes.Clone(rec.Key), bytes.Clone(rec.Value)
			res.got = append(res.got, rec)
		}
		done <- res
	}()
	committed := map[int64]string{} // offset → value
	var pending [2]map[int64]string
	for i := range 120 {
		pid := int64(i % 2)
		base := w.write(pid, i, 2)
		if pending[pid] == nil {
			pending[pid] = map[int64]string{}
		}
		pending[pid][base], pending[pid][base+1] = txnValue(pid, i), txnValue(pid, i+1)
		if i%4 >= 2 {
			commit := i%3 != 0
			w.end(pid, commit)
			if commit {
				maps.Copy(committed, pending[pid])
			}
			pending[pid] = nil
		}
	}
	w.end(0, false)
	w.end(1, false)
	_, err := p.Append([]log.Record{{Key: []byte("end")}})
	require.NoError(t, err)
	res := <-done
	require.NoError(t, res.err)
	offs := slices.Sorted(maps.Keys(committed))
	require.Len(t, res.got, len(offs))
	for i, r := range res.got {
		require.Equal(t, offs[i], r.Offset)
		require.Equal(t, committed[offs[i]], string(r.Value))
	}
}

// Many transactions over more offsets than a reader looks up at a time,
// one aborted transaction spanning them all: ReadCommitted from any offset
// returns the committed records after it, in large segments and small.
func TestReadCommittedManyWindows(t *testing.T) {
	for _, segBytes := range []int64{0, 64 << 10} {
		t.Run(fmt.Sprint("segment=", segBytes), func(t *testing.T) {
			cfg := small(newClock())
			cfg.SegmentBytes = segBytes
			if segBytes == 0 {
				cfg.SegmentBytes = DefaultSegmentBytes
			}
			cfg.IndexIntervalBytes = 4096
			p, _ := memPartition(t, cfg)
			defer p.Close()
			w := newTxnWriter(t, p)
			committed := map[int64]bool{}
			for i := range 5000 {
				pid := int64(i % 3)
				base := w.write(pid, i, 2)
				commit := i%7 != 0
				if commit {
					committed[base], committed[base+1] = true, true
				}
				w.end(pid, commit)
				if i%100 == 0 {
					w.write(99, i, 1) // the long one, aborted at the end
				}
			}
			w.end(99, false)
			require.Greater(t, p.EndOffset(), int64(3*txnWindow))
			offs := slices.Sorted(maps.Keys(committed))
			for _, from := range []int64{0, 1, 2, 3, 4095, 4096, 4097, 5000, 8191, 8192, 9000, 12289, p.EndOffset() - 1} {
				got := readIso(t, p, from, ReadCommitted)
				i, _ := slices.BinarySearch(offs, from)
				require.Len(t, got, len(offs)-i, "from %d", from)
				for j, r := range got {
					require.Equal(t, offs[i+j], r.Offset, "from %d", from)
				}
			}
			// A reader moved about with SetOffset.
			r := p.NewReaderIsolation(0, ReadCommitted)
			defer r.Close()
			x := uint64(7)
			for range 300 {
				x = x*6364136223846793005 + 1442695040888963407
				from := int64(x>>1) % p.EndOffset()
				r.SetOffset(from)
				var rec log.Record
				ok, err := r.Next(&rec)
				require.NoError(t, err)
				i, _ := slices.BinarySearch(offs, from)
				if i == len(offs) {
					require.False(t, ok)
					continue
				}
				require.True(t, ok)
				require.Equal(t, offs[i], rec.Offset, "from %d", from)
			}
		})
	}
}
