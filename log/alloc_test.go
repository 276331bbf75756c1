package log_test

import (
	"testing"

	"github.com/stratalog/strata/log"
	"github.com/stretchr/testify/require"
)

func TestAllocs(t *testing.T) {
	recs := someRecords(100, 100)
	opts := log.BatchOptions{Now: 1}
	batch, err := log.EncodeBatch(nil, recs, opts)
	require.NoError(t, err)
	buf := make([]byte, 0, len(batch))

	tests := []struct {
		name string
		fn   func()
	}{
		{"EncodeBatch into a sized buffer", func() {
			buf, _ = log.EncodeBatch(buf[:0], recs, opts)
		}},
		{"RecordIter over 100 records", func() {
			it, _ := log.NewRecordIter(batch)
			var r log.Record
			for it.Next(&r) {
			}
		}},
		{"Records over 100 records", func() {
			for range log.Records(batch) {
			}
		}},
		{"Validate", func() { _, _ = log.Validate(batch) }},
		{"CheckBatch", func() { _, _ = log.CheckBatch(batch) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Zero(t, testing.AllocsPerRun(100, tt.fn))
		})
	}
}

// TestEncodeBatchGrowsOnce: into a buffer too small (none, or room for part
// of the batch), EncodeBatch allocates exactly once, the grown buffer; its
// own working space stays on the stack.
func TestEncodeBatchGrowsOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation moves stack memory to the heap")
	}
	recs := someRecords(100, 100)
	opts := log.BatchOptions{Now: 1}
	for _, room := range []int{0, 5000} {
		allocs := testing.AllocsPerRun(100, func() {
			_, _ = log.EncodeBatch(make([]byte, 0, room), recs, opts)
		})
		want := 1.0
		if room > 0 {
			want = 2 // the buffer made here, then the grown one
		}
		require.Equal(t, want, allocs, "room for %d bytes", room)
	}
}
