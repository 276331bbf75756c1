package segment

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// appendSized appends one batch of n records of valueSize bytes to s and
// returns it.
func appendSized(t *testing.T, s *Segment, n, valueSize int) writtenBatch {
	t.Helper()
	recs := makeRecords(s.NextOffset(), n, valueSize, 1)
	b := encode(t, recs)
	require.NoError(t, s.Append(b))
	return writtenBatch{b, recs}
}

// TestZeroFill checks the life of a ZeroFill segment: its file is written
// with zeros ahead of the appends, large (written) and small (copied into
// the mapping) alike, in steps of 64 KiB that grow with the file up to
// zeroStep, and never reserved with fallocate; reads see every batch, and
// Seal trims the zeros.
func TestZeroFill(t *testing.T) {
	eachFS(t, func(t *testing.T, fx fixture) {
		cfg := Config{MaxBytes: 8 << 20, ZeroFill: true}
		s, err := Create(fx.fsys, fx.dir, 0, cfg)
		require.NoError(t, err)
		first := appendSized(t, s, 10, 1000) // over a page: written
		require.Equal(t, int64(len(first.bytes))+minGrowth, logFileSize(t, fx, 0), "zeros 64 KiB past the first batch")
		written := []writtenBatch{first}
		for i := 0; s.Size() < 3<<20; i++ {
			if i%4 == 0 {
				written = append(written, appendSized(t, s, 2, 100)) // copied into the mapping
			} else {
				written = append(written, appendSized(t, s, 10, 1000))
			}
			size := logFileSize(t, fx, 0)
			require.Equal(t, s.zeroed, size, "the zeros reach the end of the file")
			require.Greater(t, size, s.Size(), "zeros ahead of the batches")
			require.LessOrEqual(t, size, s.Size()+zeroStep)
		}
		require.Equal(t, s.zeroed, s.allocated, "appends copy into the zeros")
		requireRecords(t, written, 0, readAll(t, s, 0, 1<<30))
		require.NoError(t, s.Seal())
		require.Equal(t, s.Size(), logFileSize(t, fx, 0), "Seal trims the zeros")
		require.NoError(t, s.Close())
		r, err := Open(fx.fsys, fx.dir, 0, cfg, false)
		require.NoError(t, err)
		requireRecords(t, written, 0, readAll(t, r, 0, 1<<30))
		require.NoError(t, r.Close())
	})

	fx, m := memFixture(t)
	logAllocs := 0 // the injector runs under the Mem's lock
	m.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpAllocate && strings.HasSuffix(path, LogSuffix) {
			logAllocs++
		}
		return nil
	})
	s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: 1 << 20, ZeroFill: true})
	require.NoError(t, err)
	appendRandom(t, s, rand.New(rand.NewPCG(1, 1)), 50, 5, 500)
	require.Zero(t, logAllocs, "zeros are written, not reserved")
	for s.Size() < 1<<20-20<<10 {
		appendSized(t, s, 10, 1000)
	}
	require.Equal(t, int64(1<<20), logFileSize(t, fx, 0), "never past MaxBytes")
	require.NoError(t, s.Close())
}

// TestZeroFillCrash checks that after a crash a ZeroFill segment recovers
// every synced batch and cuts the zeros after them, and a batch that a
// failed write left half written into them.
func TestZeroFillCrash(t *testing.T) {
	for _, prealloc := range []bool{false, true} {
		t.Run(fmt.Sprintf("prealloc=%v", prealloc), func(t *testing.T) {
			testZeroFillCrash(t, Config{MaxBytes: 8 << 20, ZeroFill: true, Preallocate: prealloc})
		})
	}
}

func testZeroFillCrash(t *testing.T, cfg Config) {
	fx, m := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	var written []writtenBatch
	for range 20 {
		written = append(written, appendSized(t, s, 10, 1000), appendSized(t, s, 1, 50))
	}
	for s.zeroed-s.Size() < 20<<10 {
		written = append(written, appendSized(t, s, 10, 1000))
	}
	require.NoError(t, s.Sync())
	fileSize := logFileSize(t, fx, 0)
	require.Greater(t, fileSize, s.Size())
	require.Less(t, s.Size(), s.zeroed)

	// A torn write: the Mem writes half the bytes, then fails.
	m.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpWrite && strings.HasSuffix(path, LogSuffix) {
			return vfs.ErrInjected
		}
		return nil
	})
	recs := makeRecords(s.NextOffset(), 10, 1000, 1)
	require.ErrorIs(t, s.Append(encode(t, recs)), vfs.ErrInjected)
	m.SetInjector(nil)
	require.Equal(t, fileSize, logFileSize(t, fx, 0), "the torn batch is inside the zeros")
	require.NoError(t, s.Sync())

	after := m.Crash()
	r, rec, err := OpenRecover(after, fx.dir, 0, cfg)
	require.NoError(t, err)
	require.Equal(t, int64(len(concat(written))), rec.Bytes)
	// Cut by zeros, the batch fails its CRC, as one copied into reserved
	// zeros does.
	require.ErrorIs(t, rec.Reason, ErrCorrupt, "the torn batch is cut")
	require.Equal(t, fileSize-rec.Bytes, rec.Truncated+rec.ZeroTail)
	requireRecords(t, written, 0, readAll(t, r, 0, 1<<30))
	more := appendSized(t, r, 10, 1000)
	require.Greater(t, logFileSize(t, fixture{after, fx.dir}, 0), r.Size(), "zeros ahead again after recovery")
	require.NoError(t, r.Close())
	path := filepath.Join(fx.dir, FileName(0, LogSuffix))
	require.Equal(t, append(concat(written), more.bytes...), readFile(t, after, path), "Close trims the file")
}

// TestZeroFillFullDisk checks that zeros that cannot be written (a full
// disk) do not fail the append they were for.
func TestZeroFillFullDisk(t *testing.T) {
	fx, m := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: 8 << 20, ZeroFill: true})
	require.NoError(t, err)
	written := []writtenBatch{appendSized(t, s, 10, 1000)}
	for s.zeroed-s.Size() > 5<<10 {
		written = append(written, appendSized(t, s, 10, 1000))
	}
	failed := false // the injector runs under the Mem's lock
	m.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpWrite && strings.HasSuffix(path, LogSuffix) && !failed {
			failed = true // the zeros' write comes first
			return vfs.ErrInjected
		}
		return nil
	})
	zeroed := s.zeroed
	written = append(written, appendSized(t, s, 10, 1000))
	require.True(t, failed)
	require.Equal(t, s.Size(), s.zeroed, "the batch is written, the zeros are not")
	require.Less(t, zeroed, s.zeroed)
	m.SetInjector(nil)
	written = append(written, appendSized(t, s, 10, 1000))
	require.Greater(t, s.zeroed, s.Size(), "the next append writes zeros again")
	requireRecords(t, written, 0, readAll(t, s, 0, 1<<30))
	require.NoError(t, s.Close())
}

// TestZeroFillWriteCalls checks that fillZeros writes a step of zeros in
// calls of at most zeroChunk bytes, steps of zeroStep included.
func TestZeroFillWriteCalls(t *testing.T) {
	fx, _ := memFixture(t)
	largest := 0
	w := wrapFS{fx.fsys, func(_ string, f vfs.File) vfs.File { return sizedFile{f, &largest} }}
	s, err := Create(w, fx.dir, 0, Config{MaxBytes: 8 << 20, ZeroFill: true})
	require.NoError(t, err)
	for s.Size() < 4<<20 {
		appendSized(t, s, 10, 1000)
	}
	require.Greater(t, zeroStep, zeroChunk)
	require.Greater(t, s.Size(), int64(zeroStep), "past the file size where steps are zeroStep long")
	require.Positive(t, largest)
	require.LessOrEqual(t, largest, zeroChunk, "no write call longer than zeroChunk")
	require.NoError(t, s.Close())
}

// sizedFile records in *largest the length of its longest WriteAt.
type sizedFile struct {
	vfs.File
	largest *int
}

func (f sizedFile) WriteAt(p []byte, off int64) (int, error) {
	*f.largest = max(*f.largest, len(p))
	return f.File.WriteAt(p, off)
}
