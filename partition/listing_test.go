package partition

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// unsortedFS is a file system whose listings come in reverse order.
type unsortedFS struct{ vfs.FS }

func (u unsortedFS) ReadDir(dir string) ([]string, error) {
	names, err := u.FS.ReadDir(dir)
	slices.Reverse(names)
	return names, err
}

// TestOpenUnsortedListing: Open finds the checkpoints and every segment's
// files in a listing that is not sorted (an FS not keeping ReadDir's
// order), and reopens the partition as it was closed.
func TestOpenUnsortedListing(t *testing.T) {
	cfg := small(newClock())
	m := vfs.NewMem()
	p, err := Open(m, "topic-0", cfg, false)
	require.NoError(t, err)
	for id := 0; len(p.Segments()) < 3; id++ {
		appendIDs(t, p, id)
	}
	start := p.Segments()[1].Base + 1
	require.NoError(t, p.DeleteRecords(start))
	end := p.EndOffset()
	require.NoError(t, p.Close())

	p, err = Open(unsortedFS{m}, "topic-0", cfg, true)
	require.NoError(t, err)
	defer p.Close()
	require.Equal(t, start, p.StartOffset(), "the start offset checkpoint read")
	require.Equal(t, end, p.EndOffset())
	require.Len(t, readRange(t, p, start), int(end-start))
}

// TestListingSegmentFiles: a listing finds a segment's files by their
// base's prefix, whatever their suffix, and nothing of a segment with
// none.
func TestListingSegmentFiles(t *testing.T) {
	l := listing{"00000000000000000000.log", "00000000000000000007.index.deleted", "00000000000000000012.snapshot", "partition.metadata"}
	for base, want := range map[int64]bool{0: true, 7: true, 12: true, 3: false, 13: false, 120: false} {
		require.Equal(t, want, l.segmentFiles(base), "base %d", base)
	}
	require.True(t, l.has("partition.metadata"))
	require.False(t, l.has("partition.metadat"))
}
