package segment

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// TestFollowTailsAWriter: a follower of a segment that a writer appends to
// (preallocated, so the file holds zeros past its batches, and with
// appends copied into its mapping) sees every batch as it comes, never a
// torn one, looks records up by offset through its in-memory index, and
// goes on after the writer seals the segment (which trims the file).
func TestFollowTailsAWriter(t *testing.T) {
	eachFS(t, func(t *testing.T, fx fixture) {
		cfg := Config{MaxBytes: 1 << 20, IndexIntervalBytes: 256, Preallocate: true}
		w, err := Create(fx.fsys, fx.dir, 0, cfg)
		require.NoError(t, err)
		defer w.Close()
		r := rand.New(rand.NewPCG(1, 2))
		written := appendRandom(t, w, r, 20, 5, 100)

		f, err := OpenFollow(fx.fsys, fx.dir, 0, cfg, false)
		require.NoError(t, err)
		defer f.Close()
		require.Equal(t, w.NextOffset(), f.NextOffset())
		requireRecords(t, written, 0, readAll(t, f, 0, 1<<20))

		// A torn batch: its first half is in the file, as a write being
		// copied in leaves it. The follower stops before it.
		more := appendRandom(t, w, r, 1, 5, 100)
		end := f.Size()
		{
			half := more[0].bytes[:len(more[0].bytes)/2]
			g, err := fx.fsys.OpenFile(f.Path(), os.O_RDWR, 0)
			require.NoError(t, err)
			// The writer has written it whole; put back zeros after its half,
			// as the moment before the copy ended shows it.
			_, err = g.WriteAt(make([]byte, len(more[0].bytes)-len(half)), end+int64(len(half)))
			require.NoError(t, err)
			grew, err := f.Extend()
			require.NoError(t, err)
			require.False(t, grew, "a torn batch is not taken")
			_, err = g.WriteAt(more[0].bytes, end)
			require.NoError(t, err)
			require.NoError(t, g.Close())
		}
		written = append(written, more...)
		written = append(written, appendRandom(t, w, r, 200, 5, 100)...)
		grew, err := f.Extend()
		require.NoError(t, err)
		require.True(t, grew)
		require.Equal(t, w.NextOffset(), f.NextOffset())
		require.Positive(t, f.offsets.Entries(), "the follower indexes what it scanned")
		for _, from := range []int64{0, 7, w.NextOffset() / 2, w.NextOffset() - 1} {
			requireRecords(t, written, from, readAll(t, f, from, 1<<10))
		}

		// The writer seals: the file shrinks to its batches; the follower
		// reads on.
		require.NoError(t, w.Seal())
		grew, err = f.Extend()
		require.NoError(t, err)
		require.False(t, grew)
		requireRecords(t, written, 0, readAll(t, f, 0, 1<<20))

		// A trusted follower of the sealed segment: its index from the
		// writer's file.
		require.NoError(t, w.Sync())
		tf, err := OpenFollow(fx.fsys, fx.dir, 0, cfg, true)
		require.NoError(t, err)
		defer tf.Close()
		require.Equal(t, w.NextOffset(), tf.NextOffset())
		requireRecords(t, written, w.NextOffset()/3, readAll(t, tf, w.NextOffset()/3, 1<<10))
	})
}

// TestFollowWritesNothing: opening, extending and closing followers of a
// segment changes none of its files, and Delete leaves them in place.
func TestFollowWritesNothing(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{MaxBytes: 1 << 16, IndexIntervalBytes: 128}
	w, err := Create(vfs.OS, dir, 0, cfg)
	require.NoError(t, err)
	appendRandom(t, w, rand.New(rand.NewPCG(3, 4)), 50, 3, 50)
	require.NoError(t, w.Close())
	before := snapshotDir(t, dir)
	for _, trusted := range []bool{false, true} {
		f, err := OpenFollow(vfs.OS, dir, 0, cfg, trusted)
		require.NoError(t, err)
		_, err = f.Extend()
		require.NoError(t, err)
		require.ErrorIs(t, f.Append(encode(t, makeRecords(f.NextOffset(), 1, 1, 0))), ErrSealed)
		require.NoError(t, f.Seal())
		require.NoError(t, f.Sync())
		require.NoError(t, f.Delete())
	}
	require.Equal(t, before, snapshotDir(t, dir))
}

func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range names {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(b)
	}
	return out
}
