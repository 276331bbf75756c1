package strata_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// txnEpoch is the clock of the transactional partitions' tests.
var txnEpoch = time.UnixMilli(1_700_000_000_000).UTC()

// txnPartition holds topic t, one partition, laid out with transactions:
//
//	0 1    plain records
//	2 3    producer 1's transaction, committed by the marker at 7
//	4 5    producer 2's transaction, aborted by the marker at 8
//	6      a plain record between them
//	9      a plain record
//	10 11  producer 3's transaction, still open
//	12     a plain record after it
//
// Record i has value "v<i>" and timestamp txnEpoch + i seconds. The high
// watermark is 13, the last stable offset 10.
func txnPartition(t *testing.T, opts *strata.Options) *strata.Store {
	t.Helper()
	if opts == nil {
		opts = &strata.Options{}
	}
	if opts.FS == nil {
		opts.FS = vfs.NewMem()
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return txnEpoch.Add(time.Minute) }
	}
	opts.Sync = strata.SyncNever
	s, err := strata.Open("/store", opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	plain := func(off int64) {
		got, err := s.AppendTo(context.Background(), "t", 0, txnRecord(off))
		require.NoError(t, err)
		require.Equal(t, off, got)
	}
	txn := func(pid int64, offs ...int64) {
		var recs []strata.Record
		for _, off := range offs {
			recs = append(recs, txnRecord(off))
		}
		got, err := strata.AppendTxnBatch(s, "t", 0, pid, 0, 0, recs)
		require.NoError(t, err)
		require.Equal(t, offs[0], got)
	}
	marker := func(pid int64, commit bool, off int64) {
		got, err := strata.WriteMarker(s, "t", 0, pid, 0, commit)
		require.NoError(t, err)
		require.Equal(t, off, got)
	}
	plain(0)
	plain(1)
	txn(1, 2, 3)
	txn(2, 4, 5)
	plain(6)
	marker(1, true, 7)
	marker(2, false, 8)
	plain(9)
	txn(3, 10, 11)
	plain(12)
	return s
}

// cloneRecord returns a copy of r's offset and value.
func cloneRecord(r strata.Record) strata.Record {
	return strata.Record{Offset: r.Offset, Value: append([]byte(nil), r.Value...), Timestamp: r.Timestamp}
}

// txnRecord is the record at off of a txnPartition.
func txnRecord(off int64) strata.Record {
	return strata.Record{Value: fmt.Appendf(nil, "v%d", off), Timestamp: txnEpoch.Add(time.Duration(off) * time.Second)}
}

// committedOffsets and allOffsets are the records of a txnPartition that
// ReadCommitted and ReadUncommitted see.
var (
	committedOffsets = []int64{0, 1, 2, 3, 6, 9}
	allOffsets       = []int64{0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 12}
)

// offsetsOf returns the offsets of recs, checking each value.
func offsetsOf(t *testing.T, recs []strata.Record) []int64 {
	t.Helper()
	var out []int64
	for _, r := range recs {
		require.Equal(t, fmt.Sprintf("v%d", r.Offset), string(r.Value))
		out = append(out, r.Offset)
	}
	return out
}

// from returns the offsets of offs at or after off.
func from(offs []int64, off int64) []int64 {
	var out []int64
	for _, o := range offs {
		if o >= off {
			out = append(out, o)
		}
	}
	return out
}

// readPaths reads a partition from an offset through each read path of a
// View, up to what it sees now.
var readPaths = map[string]func(v strata.View, off int64) ([]strata.Record, error){
	"Read": func(v strata.View, off int64) ([]strata.Record, error) {
		return v.Read(context.Background(), "t", 0, off, 100)
	},
	"Read by one": func(v strata.View, off int64) ([]strata.Record, error) {
		var out []strata.Record
		for {
			recs, err := v.Read(context.Background(), "t", 0, off, 1)
			if err != nil || len(recs) == 0 {
				return out, err
			}
			out = append(out, recs...)
			off = recs[0].Offset + 1
		}
	},
	"Fetch": func(v strata.View, off int64) ([]strata.Record, error) {
		return v.Fetch(context.Background(), "t", 0, off, 100, 0)
	},
	"Scan": func(v strata.View, off int64) ([]strata.Record, error) {
		var out []strata.Record
		for r, err := range v.Scan("t", 0, off) {
			if err != nil {
				return out, err
			}
			out = append(out, cloneRecord(r))
		}
		return out, nil
	},
	"Records": func(v strata.View, off int64) ([]strata.Record, error) {
		// Tails: stop once it waits, which a context ended from the
		// start makes it report at once.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out []strata.Record
		for r, err := range v.Records(ctx, "t", 0, off) {
			if err != nil {
				if err == context.Canceled {
					err = nil
				}
				return out, err
			}
			out = append(out, cloneRecord(r))
		}
		return out, nil
	},
	"Get": func(v strata.View, off int64) ([]strata.Record, error) {
		var out []strata.Record
		end, err := v.ListOffsets("t", 0, strata.Latest)
		if err != nil {
			return nil, err
		}
		for ; off < end; off++ {
			r, err := v.Get("t", 0, off)
			if err == nil {
				out = append(out, r)
			} else if !errors.Is(err, strata.ErrNoRecord) {
				return out, err
			}
		}
		return out, nil
	},
}

func TestIsolationReadPaths(t *testing.T) {
	s := txnPartition(t, nil)
	for name, read := range readPaths {
		for _, iso := range []strata.Isolation{strata.ReadUncommitted, strata.ReadCommitted} {
			want := allOffsets
			if iso == strata.ReadCommitted {
				want = committedOffsets
			}
			t.Run(fmt.Sprintf("%s/%v", name, iso), func(t *testing.T) {
				for off := int64(0); off <= 13; off++ {
					recs, err := read(s.View(iso), off)
					require.NoError(t, err, "from %d", off)
					require.Equal(t, from(want, off), offsetsOf(t, recs), "from %d", off)
				}
			})
		}
	}
	// The store's default is ReadUncommitted.
	recs, err := s.Read(context.Background(), "t", 0, 0, 100)
	require.NoError(t, err)
	require.Equal(t, allOffsets, offsetsOf(t, recs))
	require.Equal(t, strata.ReadUncommitted, s.View(0).Isolation())

	// Once producer 3 commits, ReadCommitted sees its records and what
	// follows them.
	_, err = strata.WriteMarker(s, "t", 0, 3, 0, true)
	require.NoError(t, err)
	for name, read := range readPaths {
		recs, err := read(s.View(strata.ReadCommitted), 0)
		require.NoError(t, err, name)
		require.Equal(t, []int64{0, 1, 2, 3, 6, 9, 10, 11, 12}, offsetsOf(t, recs), name)
	}
}

// TestIsolationStoreDefault checks Options.Isolation: the store's reads
// and consumers follow it, and a View reads at another level.
func TestIsolationStoreDefault(t *testing.T) {
	s := txnPartition(t, &strata.Options{Isolation: strata.ReadCommitted})
	recs, err := s.Read(context.Background(), "t", 0, 0, 100)
	require.NoError(t, err)
	require.Equal(t, committedOffsets, offsetsOf(t, recs))
	end, err := s.ListOffsets("t", 0, strata.Latest)
	require.NoError(t, err)
	require.EqualValues(t, 10, end)
	require.Equal(t, strata.ReadCommitted, s.View(0).Isolation())

	recs, err = s.View(strata.ReadUncommitted).Read(context.Background(), "t", 0, 0, 100)
	require.NoError(t, err)
	require.Equal(t, allOffsets, offsetsOf(t, recs))

	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer c.Close()
	msgs, err := c.Poll(context.Background())
	require.NoError(t, err)
	var got []int64
	for _, m := range msgs {
		got = append(got, m.Offset)
	}
	require.Equal(t, committedOffsets, got)
}

func TestIsolationGet(t *testing.T) {
	s := txnPartition(t, nil)
	rc := s.View(strata.ReadCommitted)
	_, err := rc.Get("t", 0, 4)
	require.ErrorIs(t, err, strata.ErrNoRecord, "an aborted record")
	_, err = rc.GetInto("t", 0, 5, make([]byte, 64))
	require.ErrorIs(t, err, strata.ErrNoRecord)
	_, err = rc.Get("t", 0, 10)
	require.ErrorIs(t, err, strata.ErrOffsetOutOfRange, "at the last stable offset")
	require.ErrorContains(t, err, "[0, 10)")
	_, err = rc.Get("t", 0, 7)
	require.ErrorIs(t, err, strata.ErrNoRecord, "a marker")
	r, err := rc.GetInto("t", 0, 6, make([]byte, 64))
	require.NoError(t, err)
	require.Equal(t, "v6", string(r.Value))
	r, err = s.Get("t", 0, 4)
	require.NoError(t, err, "ReadUncommitted returns an aborted record")
	require.Equal(t, "v4", string(r.Value))
}

func TestIsolationListOffsets(t *testing.T) {
	s := txnPartition(t, nil)
	tests := []struct {
		name   string
		spec   strata.OffsetSpec
		ru, rc int64
	}{
		{"earliest", strata.Earliest, 0, 0},
		{"latest", strata.Latest, 13, 10},
		{"at an aborted record", strata.AtTime(txnEpoch.Add(4 * time.Second)), 4, 4},
		{"at an open transaction", strata.AtTime(txnEpoch.Add(11 * time.Second)), 11, -1},
		{"after the last", strata.AtTime(txnEpoch.Add(time.Hour)), -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.View(strata.ReadUncommitted).ListOffsets("t", 0, tt.spec)
			require.NoError(t, err)
			require.Equal(t, tt.ru, got, "read_uncommitted")
			got, err = s.View(strata.ReadCommitted).ListOffsets("t", 0, tt.spec)
			require.NoError(t, err)
			require.Equal(t, tt.rc, got, "read_committed")
		})
	}
}

func TestIsolationLag(t *testing.T) {
	s := txnPartition(t, nil)
	require.NoError(t, s.Commit("g", "t", 0, 4, ""))
	ru, err := s.View(strata.ReadUncommitted).Lag(context.Background(), "g", "t")
	require.NoError(t, err)
	require.Equal(t, []strata.PartitionLag{{Partition: 0, EndOffset: 13, Committed: 4, Lag: 9, OldestUnconsumed: txnEpoch.Add(4 * time.Second)}}, ru)
	rc, err := s.View(strata.ReadCommitted).Lag(context.Background(), "g", "t")
	require.NoError(t, err)
	require.Equal(t, []strata.PartitionLag{{Partition: 0, EndOffset: 10, Committed: 4, Lag: 6, OldestUnconsumed: txnEpoch.Add(6 * time.Second)}}, rc,
		"the end is the last stable offset; the oldest unconsumed record is not an aborted one")
}

// TestIsolationRecordsTails checks that a read_committed Records waits
// at the last stable offset, and that a transaction's end lets it on:
// past the records of an aborted one.
func TestIsolationRecordsTails(t *testing.T) {
	s := txnPartition(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []int64
	for r, err := range s.View(strata.ReadCommitted).Records(ctx, "t", 0, 9) {
		if err != nil {
			require.ErrorIs(t, err, context.Canceled)
			break
		}
		got = append(got, r.Offset)
		switch r.Offset {
		case 9:
			// Producer 3 aborts: records 10 and 11 go, 12 follows.
			_, err := strata.WriteMarker(s, "t", 0, 3, 0, false)
			require.NoError(t, err)
		case 12:
			_, err := s.AppendTo(ctx, "t", 0, txnRecord(14))
			require.NoError(t, err)
		case 14:
			cancel()
		}
	}
	require.Equal(t, []int64{9, 12, 14}, got)
}

// TestIsolationFetchWaits checks that a read_committed Fetch at the last
// stable offset waits for it to move, not for the high watermark, in a
// synctest bubble: the Fetch is blocked before the marker is written.
func TestIsolationFetchWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := txnPartition(t, nil)
		done := make(chan []strata.Record, 1)
		go func() {
			recs, err := s.View(strata.ReadCommitted).Fetch(context.Background(), "t", 0, 10, 100, time.Hour)
			if err != nil {
				t.Error(err)
			}
			done <- recs
		}()
		synctest.Wait()
		require.Empty(t, done, "Fetch returned before the transaction ended")
		_, err := strata.WriteMarker(s, "t", 0, 3, 0, false)
		require.NoError(t, err)
		require.Equal(t, []int64{12}, offsetsOf(t, <-done), "the aborted records are skipped")
	})
}

func TestIsolationBadInput(t *testing.T) {
	_, err := strata.Open("/s", &strata.Options{FS: vfs.NewMem(), Isolation: 9})
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
	s := txnPartition(t, nil)
	bad := s.View(9)
	_, err = bad.Read(context.Background(), "t", 0, 0, 1)
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
	require.ErrorContains(t, err, "strata: isolation Isolation(9) is not ReadUncommitted or ReadCommitted")
	_, err = bad.Fetch(context.Background(), "t", 0, 0, 1, 0)
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
	_, err = bad.Get("t", 0, 0)
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
	_, err = bad.ListOffsets("t", 0, strata.Latest)
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
	_, err = bad.Lag(context.Background(), "g", "t")
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
	for _, err := range bad.Scan("t", 0, 0) {
		require.ErrorIs(t, err, strata.ErrInvalidConfig)
	}
	for _, err := range bad.Records(context.Background(), "t", 0, 0) {
		require.ErrorIs(t, err, strata.ErrInvalidConfig)
	}
	require.Equal(t, strata.Isolation(9), bad.Isolation())
	_, err = s.Consumer("g", []string{"t"}, strata.ConsumerOptions{Isolation: 9})
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
}

func TestIsolationString(t *testing.T) {
	for iso, want := range map[strata.Isolation]string{0: "default", strata.ReadUncommitted: "read_uncommitted", strata.ReadCommitted: "read_committed", 7: "Isolation(7)"} {
		require.Equal(t, want, iso.String())
	}
}

// pollOffsets polls c once and returns the offsets it got.
func pollOffsets(t *testing.T, c *strata.Consumer) []int64 {
	t.Helper()
	msgs, err := c.Poll(context.Background())
	require.NoError(t, err)
	var out []int64
	for _, m := range msgs {
		out = append(out, m.Offset)
	}
	return out
}

func TestIsolationConsumer(t *testing.T) {
	s := txnPartition(t, nil)
	// ResetLatest starts a read_committed consumer at the last stable
	// offset: it reads the open transaction once it commits.
	c, err := s.Consumer("latest", []string{"t"}, strata.ConsumerOptions{Isolation: strata.ReadCommitted})
	require.NoError(t, err)
	defer c.Close()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Poll(ended)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, c.Commit(context.Background()))
	om, ok := s.Committed("latest", "t", 0)
	require.True(t, ok)
	require.EqualValues(t, 10, om.Offset, "the position is the last stable offset")
	require.NoError(t, c.SeekTo(strata.TopicPartition{Topic: "t"}, strata.AtTime(txnEpoch.Add(11*time.Second))))
	require.NoError(t, c.Commit(context.Background()))
	om, _ = s.Committed("latest", "t", 0)
	require.EqualValues(t, 10, om.Offset, "SeekTo finds offsets below the last stable offset only")
	_, err = strata.WriteMarker(s, "t", 0, 3, 0, true)
	require.NoError(t, err)
	require.Equal(t, []int64{10, 11, 12}, pollOffsets(t, c))

	// The store's default, ReadUncommitted, reads the aborted records.
	u, err := s.Consumer("all", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer u.Close()
	require.Equal(t, allOffsets, pollOffsets(t, u))
}

// TestIsolationConsumerWaitsForPendingOffsets checks Kafka's
// require_stable: a read_committed consumer does not start a partition
// for which a transaction has an offset of its group pending, and starts
// it at that offset once the transaction commits.
func TestIsolationConsumerWaitsForPendingOffsets(t *testing.T) {
	s := txnPartition(t, nil)
	require.NoError(t, s.Commit("g", "t", 0, 2, ""))
	require.NoError(t, strata.CommitTxnOffsets(s, "g", 9, 0, map[strata.TopicPartition]strata.OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 6}}))

	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{Isolation: strata.ReadCommitted})
	require.NoError(t, err)
	defer c.Close()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Poll(ended)
	require.ErrorIs(t, err, context.Canceled, "no error for the partition it waits on")
	require.Empty(t, c.Assignment(), "not started while the offset is pending")

	require.NoError(t, strata.EndTxnOffsets(s, 9, 0, true))
	require.Equal(t, []int64{6, 9}, pollOffsets(t, c), "starts at the offset the transaction committed")

	// A read_uncommitted consumer does not wait (Kafka's consumer sends
	// require_stable only under read_committed).
	require.NoError(t, strata.CommitTxnOffsets(s, "h", 9, 0, map[strata.TopicPartition]strata.OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 6}}))
	u, err := s.Consumer("h", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer u.Close()
	require.Equal(t, allOffsets, pollOffsets(t, u))
}
