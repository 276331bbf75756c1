package strata_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/stratatest"
)

// scanned collects what a Scan yields: the offsets and values of its
// records, and its error.
func scanned(s *strata.Store, topic string, part int, offset int64) (offsets []int64, values []string, err error) {
	for r, err := range s.Scan(topic, part, offset) {
		if err != nil {
			return offsets, values, err
		}
		offsets = append(offsets, r.Offset)
		values = append(values, string(r.Value))
	}
	return offsets, values, nil
}

func offsetRange(from, to int64) []int64 {
	var out []int64
	for o := from; o < to; o++ {
		out = append(out, o)
	}
	return out
}

// TestScanEndsAtTheEndAsOfTheCall: a Scan reads up to the end offset as it
// was when Scan was called, and returns: records appended after the call,
// before or during the loop, are not yielded; an empty partition and a
// Scan from the end yield nothing at once.
func TestScanEndsAtTheEndAsOfTheCall(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))

	offs, _, err := scanned(s, "t", 0, 0)
	require.NoError(t, err)
	require.Empty(t, offs, "an empty partition")

	for i := range 5 {
		_, err := s.AppendTo(ctx, "t", 0, rec("k", fmt.Sprint(i)))
		require.NoError(t, err)
	}
	seq := s.Scan("t", 0, 0)
	_, err = s.AppendTo(ctx, "t", 0, rec("k", "after the call"))
	require.NoError(t, err)
	var got []int64
	for r, err := range seq {
		require.NoError(t, err)
		got = append(got, r.Offset)
		if len(got) <= 3 {
			_, err = s.AppendTo(ctx, "t", 0, rec("k", "during the loop"))
			require.NoError(t, err)
		}
	}
	require.Equal(t, offsetRange(0, 5), got)

	end, err := s.ListOffsets("t", 0, strata.Latest)
	require.NoError(t, err)
	offs, vals, err := scanned(s, "t", 0, 2)
	require.NoError(t, err)
	require.Equal(t, offsetRange(2, end), offs, "a new Scan reads what is there now")
	require.Equal(t, []string{"2", "3", "4", "after the call"}, vals[:4])

	offs, _, err = scanned(s, "t", 0, end)
	require.NoError(t, err)
	require.Empty(t, offs, "a Scan from the end offset")

	n := 0
	for _, err := range s.Scan("t", 0, 0) {
		require.NoError(t, err)
		n++
		if n == 2 {
			break
		}
	}
	require.Equal(t, 2, n, "breaking stops the scan")
}

// TestScanBadInput: errors are yielded once, as the last element.
func TestScanBadInput(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	for i := range 10 {
		_, err := s.AppendTo(ctx, "t", 0, rec("k", fmt.Sprint(i)))
		require.NoError(t, err)
	}
	require.NoError(t, s.DeleteRecords("t", 0, 3))
	tests := []struct {
		name   string
		topic  string
		part   int
		offset int64
		want   error
	}{
		{"unknown topic", "nope", 0, 0, strata.ErrUnknownTopic},
		{"unknown partition", "t", 1, 0, strata.ErrUnknownPartition},
		{"negative partition", "t", -1, 0, strata.ErrUnknownPartition},
		{"below the start offset", "t", 0, 2, strata.ErrOffsetOutOfRange},
		{"negative offset", "t", 0, -1, strata.ErrOffsetOutOfRange},
		{"past the end offset", "t", 0, 11, strata.ErrOffsetOutOfRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			var last error
			for _, err := range s.Scan(tt.topic, tt.part, tt.offset) {
				n++
				last = err
			}
			require.Equal(t, 1, n, "one element: the error")
			require.ErrorIs(t, last, tt.want)
		})
	}
	offs, _, err := scanned(s, "t", 0, 3)
	require.NoError(t, err)
	require.Equal(t, offsetRange(3, 10), offs)
}

// TestScanAfterClose: a Scan of a closed store yields ErrClosed, and so
// does one under way when the store closes.
func TestScanAfterClose(t *testing.T) {
	s, err := strata.Open(t.TempDir(), &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	for i := range 10 {
		_, err := s.AppendTo(ctx, "t", 0, rec("k", fmt.Sprint(i))) // a batch each
		require.NoError(t, err)
	}
	var got []int64
	var last error
	for r, err := range s.Scan("t", 0, 0) {
		if err != nil {
			last = err
			break
		}
		got = append(got, r.Offset)
		if r.Offset == 4 {
			require.NoError(t, s.Close())
		}
	}
	require.Equal(t, offsetRange(0, 5), got)
	require.ErrorIs(t, last, strata.ErrClosed)

	_, _, err = scanned(s, "t", 0, 0)
	require.ErrorIs(t, err, strata.ErrClosed)
}

// TestScanKafkaDirectory scans a partition laid out as Kafka writes it from
// every offset: the records from there on, markers and removed offsets
// stepped over.
func TestScanKafkaDirectory(t *testing.T) {
	s, _, want, end := openKafkaDir(t, true, kafkadir.Files{})
	defer s.Close()
	for off := int64(0); off <= end; off++ {
		var got []strata.Record
		for r, err := range s.Scan("k", 0, off) {
			require.NoError(t, err, "offset %d", off)
			r.Key, r.Value = append([]byte(nil), r.Key...), append([]byte(nil), r.Value...)
			got = append(got, r)
		}
		requireKafkaRecords(t, want, off, got)
	}
}

// TestScanStopsAtDamage: the intact records before a damaged batch, then
// ErrCorrupt.
func TestScanStopsAtDamage(t *testing.T) {
	s := openDamaged(t, 20, 12)
	offs, _, err := scanned(s, "t", 0, 0)
	require.ErrorIs(t, err, strata.ErrCorrupt)
	require.Equal(t, offsetRange(0, 12), offs)
}
