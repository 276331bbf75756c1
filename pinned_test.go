package strata_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// TestPinBatchesOutlivesTheSegment pins the first segment's batches, then
// drops or closes the segment: the bytes stay what they were (they alias
// the mapping, which an early unmap would make a crash), the segment's log
// file stays until Release, and Release lets a dropped segment's files go.
func TestPinBatchesOutlivesTheSegment(t *testing.T) {
	for _, tc := range []struct {
		name string
		drop func(t *testing.T, s *strata.Store)
		// kept: the log file stays on disk until Release (DeleteTopic
		// unlinks it, and the mapping holds the space); removed: Release
		// removes it.
		kept, removed bool
	}{
		{"DeleteRecords and retention", func(t *testing.T, s *strata.Store) {
			require.NoError(t, s.DeleteRecords("t", 0, 40))
			_, err := s.EnforceRetention(ctx)
			require.NoError(t, err)
		}, true, true},
		{"DeleteTopic", func(t *testing.T, s *strata.Store) {
			require.NoError(t, s.DeleteTopic("t"))
		}, false, true},
		{"Close", func(t *testing.T, s *strata.Store) {
			require.NoError(t, s.Close())
		}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := stratatest.OpenOnDisk(t, &strata.Options{RetentionCheckInterval: -1})
			require.NoError(t, s.CreateTopic("t", strata.TopicConfig{SegmentBytes: 2048, MaxBatchBytes: 1024}))
			for i := range 50 {
				_, err := s.AppendTo(ctx, "t", 0, rec("k", fmt.Sprintf("%0100d", i)))
				require.NoError(t, err)
			}
			first := filepath.Join(s.Dir(), "t-0", fmt.Sprintf("%020d.log", 0))
			_, err := os.Stat(first)
			require.NoError(t, err)

			b, err := s.View(strata.ReadUncommitted).PinBatches("t", 0, 0, 1<<20)
			require.NoError(t, err)
			want, err := s.View(strata.ReadUncommitted).ReadBatches("t", 0, 0, 1<<20, nil)
			require.NoError(t, err)
			require.Equal(t, want, b.Bytes)
			require.Less(t, len(b.Bytes), 2048, "one segment's batches")
			require.Equal(t, int64(0), b.StartOffset)
			require.Equal(t, int64(50), b.HighWatermark)
			require.Equal(t, int64(50), b.LastStableOffset)

			tc.drop(t, s)
			require.Equal(t, want, b.Bytes, "the mapping stays while pinned")
			if tc.kept {
				require.NotEmpty(t, logFiles(t, first), "the segment stays on disk while pinned")
			}
			b.Release()
			b.Release() // again: nothing
			if tc.removed {
				require.Empty(t, logFiles(t, first), "released, the dropped segment goes")
			}
		})
	}
}

// logFiles returns the files of a segment's log, under its name or marked
// deleted, in its partition directory or the one DeleteTopic renamed it to.
func logFiles(t *testing.T, path string) []string {
	t.Helper()
	var found []string
	root := filepath.Dir(filepath.Dir(path))
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && bytes.HasPrefix([]byte(d.Name()), []byte(filepath.Base(path))) {
			found = append(found, p)
		}
		return nil
	})
	require.NoError(t, err)
	return found
}

// TestPinBatches checks what PinBatches returns beside ReadBatches: the
// same bytes at each isolation level, nothing to release at the end, and
// the errors of a bad topic, partition or offset.
func TestPinBatches(t *testing.T) {
	s, payouts, done := examplePayments(nil)
	defer done()
	defer payouts.Abort(ctx)
	hw, err := s.View(strata.ReadUncommitted).ListOffsets("payments", 0, strata.Latest)
	require.NoError(t, err)
	lso, err := s.View(strata.ReadCommitted).ListOffsets("payments", 0, strata.Latest)
	require.NoError(t, err)
	require.Less(t, lso, hw, "a transaction is open")
	for _, iso := range []strata.Isolation{strata.ReadUncommitted, strata.ReadCommitted} {
		v := s.View(iso)
		for off := int64(0); off <= hw; off++ {
			want, err := v.ReadBatches("payments", 0, off, 1<<20, nil)
			require.NoError(t, err)
			b, err := v.PinBatches("payments", 0, off, 1<<20)
			require.NoError(t, err)
			require.Equal(t, len(want), len(b.Bytes), "%v at %d", iso, off)
			if len(want) > 0 {
				require.Equal(t, want, b.Bytes)
			}
			require.Equal(t, hw, b.HighWatermark)
			require.Equal(t, lso, b.LastStableOffset)
			b.Release()
		}
	}
	v := s.View(strata.ReadUncommitted)
	_, err = v.PinBatches("nope", 0, 0, 1)
	require.ErrorIs(t, err, strata.ErrUnknownTopic)
	_, err = v.PinBatches("payments", 1, 0, 1)
	require.ErrorIs(t, err, strata.ErrUnknownPartition)
	_, err = v.PinBatches("payments", 0, hw+1, 1)
	require.ErrorIs(t, err, strata.ErrOffsetOutOfRange)
}
