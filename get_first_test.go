package strata_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// mallocsOf returns how many objects one call of f allocates, as
// testing.AllocsPerRun counts them but without its warm-up call: the first
// call is the one measured.
func mallocsOf(f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// TestFirstGetAfterOpenAllocatesNothing reopens a store of large batches
// (100 records of 100 B) and looks up a record of the last batch: the first
// lookup after Open, which checks the batch's CRC and learns where its
// records start, allocates nothing into a buffer large enough, nor do
// lookups of the first record of the batch before it (its CRC checked too)
// and of an appended record. Each reads the record written there.
func TestFirstGetAfterOpenAllocatesNothing(t *testing.T) {
	dir := t.TempDir()
	opts := &strata.Options{Sync: strata.SyncNever}
	s, err := strata.Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	recs := make([]strata.Record, 100)
	value := make([]byte, 100)
	for i := range recs {
		recs[i] = strata.Record{Key: []byte{byte(i)}, Value: value}
	}
	for range 50 {
		_, err := s.AppendTo(ctx, "t", 0, recs...)
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())

	s, err = strata.Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	buf := make([]byte, 4096)
	get := func(off int64) func() {
		return func() {
			r, err := s.GetInto("t", 0, off, buf)
			if err != nil || r.Offset != off || len(r.Key) != 1 || r.Key[0] != byte(off%100) {
				t.Errorf("offset %d: %v, %v", off, r, err)
			}
		}
	}
	require.Zero(t, mallocsOf(get(4999)), "the last record, first after Open")
	require.Zero(t, mallocsOf(get(4950)), "the last batch's first")
	require.Zero(t, mallocsOf(get(4900)), "the first of the batch before it")
	_, err = s.AppendTo(ctx, "t", 0, recs...)
	require.NoError(t, err)
	require.Zero(t, mallocsOf(get(5000)), "an appended record")
	require.Zero(t, mallocsOf(get(4977)), "the last batch before the append again")
}
