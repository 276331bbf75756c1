package strata_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// TestDiskFullUnderZerosAhead: under SyncNever and SyncEvery the appends
// after a segment's first write zeros ahead of themselves and small ones
// are copied into the mapping. The disk fills with a few pages left, at
// each of several points of the segment: appends then fail with ENOSPC or
// succeed, never by meeting the full disk in a copy into the mapping
// (vfs.ErrFault), and once there is space again they go on; the reopened
// store holds every acknowledged record.
func TestDiskFullUnderZerosAhead(t *testing.T) {
	for _, pol := range []struct {
		name string
		sync strata.SyncPolicy
	}{{"never", strata.SyncNever}, {"every", strata.SyncEvery(1 << 40)}} {
		for _, free := range []int{0, 1, 3, 17} {
			for _, before := range []int{1, 40, 700} {
				t.Run(fmt.Sprintf("%s/free=%d/before=%d", pol.name, free, before), func(t *testing.T) {
					diskFullZeros(t, pol.sync, free, before)
				})
			}
		}
	}
}

func diskFullZeros(t *testing.T, sync strata.SyncPolicy, free, before int) {
	dir := mountTmpfs(t, 4<<20)
	path := filepath.Join(dir, "store")
	filler := filepath.Join(dir, "filler")
	opts := &strata.Options{Sync: sync}
	s, err := strata.Open(path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 1, SegmentBytes: 1 << 20}))
	var sizes []int
	add := func(size int) error {
		_, err := s.AppendTo(ctx, "events", 0, fullDiskRecord(len(sizes), size))
		if err == nil {
			sizes = append(sizes, size)
		}
		return err
	}
	for i := range before {
		require.NoError(t, add(50+i%7*30))
	}
	fill(t, filler, 8<<20)
	fi, err := os.Stat(filler)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(filler, max(0, fi.Size()-int64(free)*4096)))
	failed := 0
	for i := 0; failed < 5 && i < 20000; i++ {
		size := 50 + i%11*40
		if i%13 == 0 {
			size = 3000
		}
		if err := add(size); err != nil {
			require.ErrorIs(t, err, syscall.ENOSPC)
			require.NotErrorIs(t, err, vfs.ErrFault, "a copy into the mapping met the full disk")
			failed++
		}
	}
	require.NoError(t, os.Remove(filler))
	for range 50 {
		require.NoError(t, add(100))
	}
	requireRecords(t, s, sizes)
	require.NoError(t, s.Close())
	s, err = strata.Open(path, opts)
	require.NoError(t, err)
	requireRecords(t, s, sizes)
	require.NoError(t, s.Close())
}
