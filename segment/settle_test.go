package segment

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// damagedFollower writes count batches with a writer, flips a byte in the
// batch bad (count = bad+1 makes it the last), at flip (from the end if
// negative), and returns a
// follower of the file, the batches and the bad batch's position.
func damagedFollower(t *testing.T, fx fixture, count, bad, flip int) (*Segment, []writtenBatch, int64) {
	t.Helper()
	cfg := Config{MaxBytes: 1 << 20, IndexIntervalBytes: 256}
	w, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	written := appendRandom(t, w, rand.New(rand.NewPCG(5, 6)), count, 4, 200)
	require.NoError(t, w.Close())
	var pos int64
	for _, b := range written[:bad] {
		pos += int64(len(b.bytes))
	}
	g, err := fx.fsys.OpenFile(fx.dir+"/"+FileName(0, LogSuffix), os.O_RDWR, 0)
	require.NoError(t, err)
	at := pos + int64(flip)
	if flip < 0 {
		at += int64(len(written[bad].bytes))
	}
	one := []byte{0}
	_, err = g.ReadAt(one, at)
	require.NoError(t, err)
	one[0] ^= 0x5a
	_, err = g.WriteAt(one, at)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	f, err := OpenFollow(fx.fsys, fx.dir, 0, cfg, false)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	return f, written, pos
}

// TestFollowDamageBeforeValidBatches: a batch whose CRC fails with valid
// batches after it is damage at once, reported with the file and position;
// the batches before it read.
func TestFollowDamageBeforeValidBatches(t *testing.T) {
	eachFS(t, func(t *testing.T, fx fixture) {
		for _, flip := range []int{-3, 58} { // a record; the header's record count
			f, written, pos := damagedFollower(t, fx, 12, 5, flip)
			require.Equal(t, written[5].recs[0].Offset, f.NextOffset())
			requireRecords(t, written[:5], 0, readAll(t, f, 0, 1<<20))
			err := f.TailDamage()
			require.ErrorIs(t, err, ErrCorrupt, "flip at %d", flip)
			require.ErrorContains(t, err, fmt.Sprintf("%s at position %d", f.Path(), pos))
			require.NoError(t, f.Close())
		}
	})
}

// TestFollowDamageSettles: a bad last batch is not damage at the first
// look (a batch being copied in looks so), but is when it reads the same
// after settleWait; it stops being damage when the bytes become the batch.
// One whose last bytes are zeros (a copy cut short) never is, unless a
// later segment exists (SetFinal).
func TestFollowDamageSettles(t *testing.T) {
	defer func(d time.Duration) { settleWait = d }(settleWait)
	settleWait = 0
	eachFS(t, func(t *testing.T, fx fixture) {
		f, written, pos := damagedFollower(t, fx, 6, 5, -3)
		require.NoError(t, f.TailDamage(), "the first look")
		_, err := f.Extend()
		require.NoError(t, err)
		require.ErrorIs(t, f.TailDamage(), ErrCorrupt, "the same bytes again")
		require.ErrorContains(t, f.TailDamage(), fmt.Sprintf("at position %d", pos))

		g, err := fx.fsys.OpenFile(f.Path(), os.O_RDWR, 0)
		require.NoError(t, err)
		defer g.Close()
		_, err = g.WriteAt(written[5].bytes, pos)
		require.NoError(t, err)
		grew, err := f.Extend()
		require.NoError(t, err)
		require.True(t, grew)
		require.NoError(t, f.TailDamage())

		// Torn: the batch's second half is zeros.
		more := written[5].bytes
		torn := append([]byte(nil), more...)
		clear(torn[len(torn)/2:])
		log := f.Size()
		_, err = g.WriteAt(torn, log)
		require.NoError(t, err)
		for range 3 {
			_, err = f.Extend()
			require.NoError(t, err)
			require.NoError(t, f.TailDamage(), "a torn batch")
		}
		f.SetFinal()
		require.ErrorIs(t, f.TailDamage(), ErrCorrupt, "a torn batch in a segment another follows")
	})
}

// tornReadFile is a .log file that returns, at the first read of more
// than a header at position at, the bytes with the last one changed: what
// a read sees of a batch being copied over bytes that were not zeros.
type tornReadFile struct {
	vfs.File
	at   int64
	done *bool
}

func (f tornReadFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	if off == f.at && len(p) > 61 && !*f.done {
		*f.done = true
		p[n-1] ^= 0xff
	}
	return n, err
}

// tornReadFS is fsys with its .log files tornReadFiles.
func tornReadFS(fsys vfs.FS, at int64, done *bool) vfs.FS {
	return wrapFS{fsys, func(name string, f vfs.File) vfs.File {
		if strings.HasSuffix(name, LogSuffix) {
			return tornReadFile{f, at, done}
		}
		return f
	}}
}

// TestFollowTornReadIsNotDamage: a read of a batch that caught it being
// copied in, with a valid batch after it by the time that one is read,
// is not damage: the batch reads whole again, and is taken.
func TestFollowTornReadIsNotDamage(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{MaxBytes: 1 << 20, IndexIntervalBytes: 256}
	w, err := Create(vfs.OS, dir, 0, cfg)
	require.NoError(t, err)
	written := appendRandom(t, w, rand.New(rand.NewPCG(8, 9)), 6, 4, 200)
	require.NoError(t, w.Close())
	var pos int64
	for _, b := range written[:3] {
		pos += int64(len(b.bytes))
	}
	done := false
	f, err := OpenFollow(tornReadFS(vfs.OS, pos, &done), dir, 0, cfg, false)
	require.NoError(t, err)
	defer f.Close()
	require.True(t, done, "the torn read happened")
	require.NoError(t, f.TailDamage())
	_, err = f.Extend()
	require.NoError(t, err)
	require.Equal(t, written[5].recs[len(written[5].recs)-1].Offset+1, f.NextOffset())
	requireRecords(t, written, 0, readAll(t, f, 0, 1<<20))
}
