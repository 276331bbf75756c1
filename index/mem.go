package index

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/stratalog/strata/vfs"
)

// The indexes of a reader of a directory that another process writes (see
// segment.OpenFollow) live in memory: the writer's files are never mapped,
// since a mapping of a file that later shrinks faults on access, and the
// files of a segment being written are not to be trusted anyway.

// NewMemOffset returns an empty offset index for the segment at base that
// lives in memory only, with room for entries entries: Append fills it
// (ErrFull past that), and nothing is ever written to a file. path is the
// name its errors give.
func NewMemOffset(path string, base int64, entries int) (*Offset, error) {
	x := &Offset{}
	if err := x.m.memOpen(path, base, OffsetEntrySize, entries, nil); err != nil {
		return nil, err
	}
	return x, nil
}

// NewMemTime is NewMemOffset for a time index.
func NewMemTime(path string, base int64, entries int) (*Time, error) {
	x := &Time{}
	if err := x.m.memOpen(path, base, TimeEntrySize, entries, nil); err != nil {
		return nil, err
	}
	return x, nil
}

// LoadOffset reads the offset index file at path, of the segment at base,
// into memory with pread, and returns it sealed: OpenOffset's read-only
// index without a mapping, so that the file may shrink or go meanwhile. A
// size that is not a multiple of the entry size is a *CorruptError; the
// entries are not checked (see Check).
func LoadOffset(fsys vfs.FS, path string, base int64) (*Offset, error) {
	x := &Offset{}
	if err := x.m.loadMem(fsys, path, base, OffsetEntrySize); err != nil {
		return nil, err
	}
	return x, nil
}

// LoadTime is LoadOffset for a time index.
func LoadTime(fsys vfs.FS, path string, base int64) (*Time, error) {
	x := &Time{}
	if err := x.m.loadMem(fsys, path, base, TimeEntrySize); err != nil {
		return nil, err
	}
	return x, nil
}

// memOpen makes m an in-memory index of size-byte entries with room for
// entries entries, holding data's entries, and no entries yet; data, when not nil, is its memory (taken,
// not copied).
func (m *mapped) memOpen(path string, base int64, size, entries int, data []byte) error {
	if base < 0 {
		return fmt.Errorf("index: negative base offset %d for %s", base, path)
	}
	if entries < 0 || entries > math.MaxInt32/size {
		return fmt.Errorf("index: %d entries for %s out of range [0, %d]", entries, path, math.MaxInt32/size)
	}
	m.path, m.base, m.size, m.mem = path, base, size, true
	if data == nil {
		data = make([]byte, entries*size)
	}
	m.data = data
	m.limit.Store(int64(entries))
	return nil
}

// loadMem reads the file at path into a sealed in-memory index.
func (m *mapped) loadMem(fsys vfs.FS, path string, base int64, size int) error {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	defer f.Close()
	n, err := f.Size()
	if err != nil {
		return fmt.Errorf("index: size of %s: %w", path, err)
	}
	if n > math.MaxInt32 {
		return &CorruptError{Path: path, Entry: -1, Pos: n, Reason: "file larger than 2 GiB"}
	}
	if n%int64(size) != 0 {
		return &CorruptError{Path: path, Entry: -1, Pos: n,
			Reason: fmt.Sprintf("size is not a multiple of the entry size %d", size)}
	}
	data := make([]byte, n)
	if k, err := f.ReadAt(data, 0); err != nil && !(errors.Is(err, io.EOF) && k == len(data)) {
		return fmt.Errorf("index: reading %s: %w", path, err)
	}
	entries := int(n) / size
	if err := m.memOpen(path, base, size, entries, data); err != nil {
		return err
	}
	m.n.Store(int64(entries))
	m.sealed.Store(true)
	return nil
}
