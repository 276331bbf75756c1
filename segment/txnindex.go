package segment

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/stratalog/strata/vfs"
)

// TxnIndexSuffix names a segment's aborted-transaction index, Kafka's
// .txnindex.
const TxnIndexSuffix = ".txnindex"

// AbortedTxnSize is the size of one .txnindex entry, in bytes.
const AbortedTxnSize = 34

// AbortedTxn is one entry of a segment's .txnindex: a transaction that its
// producer aborted, whose ABORT marker is in the segment. On disk, as
// Kafka's AbortedTxn writes it (storage/.../log/AbortedTxn.java), 34 bytes
// big-endian:
//
//	int16 version (0)
//	int64 producer id
//	int64 first offset       the transaction's first offset in the partition
//	int64 last offset        the ABORT marker's offset
//	int64 last stable offset the partition's LSO when the marker was written
//
// The transaction's batches lie in [FirstOffset, LastOffset), possibly in
// earlier segments, mixed with other producers' batches.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// appendTo appends the entry's 34 bytes to b.
func (t AbortedTxn) appendTo(b []byte) []byte {
	be := binary.BigEndian
	b = be.AppendUint16(b, 0)
	b = be.AppendUint64(b, uint64(t.ProducerID))
	b = be.AppendUint64(b, uint64(t.FirstOffset))
	b = be.AppendUint64(b, uint64(t.LastOffset))
	return be.AppendUint64(b, uint64(t.LastStableOffset))
}

// txnIndex is a segment's aborted transactions and their file. As Kafka's
// TransactionIndex, the file is created at the first entry (a segment
// under a temporary name creates it at once, so that renaming the set into
// place replaces an older segment's), and holds entries back to back. The
// entries are kept in memory too, sorted by LastOffset, and published
// through an atomic pointer so that readers need no lock: the writer
// appends past the length readers see, or replaces the slice.
type txnIndex struct {
	path    string
	entries atomic.Pointer[[]AbortedTxn]
	bytes   int64 // whole entries in the file
	damage  error // what loading found wrong (Open fails, Recover cuts it)

	// mu guards file and dirty, for SyncTxnIndex, which runs beside the
	// writer; the writer changes them under it.
	mu    sync.Mutex
	file  vfs.File // nil while there is no file
	dirty bool     // written since the last fsync
}

// set sets the file, and dirty.
func (x *txnIndex) set(f vfs.File, dirty bool) {
	x.mu.Lock()
	x.file, x.dirty = f, dirty
	x.mu.Unlock()
}

// markDirty records a write not yet fsynced.
func (x *txnIndex) markDirty() {
	x.mu.Lock()
	x.dirty = true
	x.mu.Unlock()
}

// openTxnIndex opens the segment's .txnindex if there is one (with create,
// a segment under a temporary name creates it), reading its entries. Bytes
// that do not make an entry, an entry of a later version or one whose last
// offset is below the base offset are kept out, and recorded as damage:
// Open fails with ErrCorrupt, and Recover cuts the file there.
func (s *Segment) openTxnIndex(create bool) error {
	x := &s.txns
	x.path = s.filePath(TxnIndexSuffix)
	if create {
		if s.tmp == "" {
			return nil
		}
		return s.createTxnFile()
	}
	if s.cfg.listed != nil && !s.cfg.listed(filepath.Base(x.path)) {
		return nil
	}
	flag := os.O_RDWR
	if s.follower {
		flag = os.O_RDONLY
	}
	f, err := s.fsys.OpenFile(x.path, flag, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("segment: opening %s: %w", x.path, err)
	}
	x.set(f, false)
	size, err := f.Size()
	if err != nil {
		return fmt.Errorf("segment: %s: %w", x.path, err)
	}
	buf := make([]byte, size)
	if k, err := f.ReadAt(buf, 0); err != nil {
		if !s.follower || !errors.Is(err, io.EOF) {
			return fmt.Errorf("segment: reading %s: %w", x.path, err)
		}
		// The owner's recovery cut the file since its size was read:
		// what is left.
		size, buf = int64(k), buf[:k]
	}
	var list []AbortedTxn
	pos := int64(0)
	for ; pos+AbortedTxnSize <= size; pos += AbortedTxnSize {
		b := buf[pos:]
		be := binary.BigEndian
		t := AbortedTxn{
			ProducerID:       int64(be.Uint64(b[2:])),
			FirstOffset:      int64(be.Uint64(b[10:])),
			LastOffset:       int64(be.Uint64(b[18:])),
			LastStableOffset: int64(be.Uint64(b[26:])),
		}
		if v := int16(be.Uint16(b)); v > 0 {
			x.damage = corruptAt(x.path, pos, fmt.Errorf("aborted transaction entry of version %d, want 0", v))
			break
		}
		if t.LastOffset < s.base {
			x.damage = corruptAt(x.path, pos, fmt.Errorf("aborted transaction ending at %d, below the segment's base offset %d", t.LastOffset, s.base))
			break
		}
		list = append(list, t)
	}
	if x.damage == nil && pos < size {
		x.damage = corruptAt(x.path, pos, fmt.Errorf("%d bytes after the last whole entry", size-pos))
	}
	x.bytes = pos
	// Kafka appends in marker order; sorting costs nothing then and
	// makes lookups by last offset work for any file.
	slices.SortStableFunc(list, func(a, b AbortedTxn) int { return cmp.Compare(a.LastOffset, b.LastOffset) })
	x.entries.Store(&list)
	return nil
}

// lastOffsetCmp compares an entry's LastOffset with off, for binary
// searches of the entries.
func lastOffsetCmp(e AbortedTxn, off int64) int { return cmp.Compare(e.LastOffset, off) }

// createTxnFile creates the .txnindex file (empty), replacing a stale one.
func (s *Segment) createTxnFile() error {
	x := &s.txns
	f, err := s.fsys.OpenFile(x.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("segment: creating %s: %w", x.path, err)
	}
	x.set(f, false)
	x.bytes = 0
	return nil
}

// AbortedTxns returns the aborted transactions whose ABORT markers the
// segment holds, by rising LastOffset. The slice is shared: do not modify
// it. It stays valid (and unchanged) after later appends. Safe to call
// while the writer appends.
func (s *Segment) AbortedTxns() []AbortedTxn {
	if p := s.txns.entries.Load(); p != nil {
		return *p
	}
	return nil
}

// AppendAbortedTxn adds t to the segment's .txnindex, creating the file
// (and syncing the directory) on the first entry, as Kafka's
// TransactionIndex.append does once a producer's ABORT marker is in the
// segment. t.LastOffset must lie in [Base, NextOffset) and t.FirstOffset
// at or below it (ErrInvalidBatch otherwise, and nothing is written). An
// entry whose LastOffset the index already holds is not written again, so
// that replaying markers after a crash adds only those missing. The entry
// is durable after the next Sync.
func (s *Segment) AppendAbortedTxn(t AbortedTxn) error {
	if s.closed {
		return ErrClosed
	}
	var why string
	switch next := s.next.Load(); {
	case t.ProducerID < 0:
		why = "has no producer id"
	case t.FirstOffset < 0 || t.FirstOffset > t.LastOffset:
		why = fmt.Sprintf("starts at %d, want 0 to its marker's offset", t.FirstOffset)
	case t.LastOffset < s.base || t.LastOffset >= next:
		why = fmt.Sprintf("has its marker outside %s's offsets [%d, %d)", s.path, s.base, next)
	}
	if why != "" {
		return fmt.Errorf("segment: aborted transaction of producer %d over [%d, %d] %s: %w",
			t.ProducerID, t.FirstOffset, t.LastOffset, why, ErrInvalidBatch)
	}
	x := &s.txns
	old := s.AbortedTxns()
	i, found := slices.BinarySearchFunc(old, t.LastOffset, lastOffsetCmp)
	if found {
		return nil
	}
	if s.follower {
		// The owner writes the file; a follower keeps what it learns
		// from the markers it reads in memory.
		list := slices.Insert(slices.Clone(old), i, t)
		x.entries.Store(&list)
		return nil
	}
	created := false
	if x.file == nil {
		if err := s.createTxnFile(); err != nil {
			return err
		}
		created = true
	}
	var buf [AbortedTxnSize]byte
	if _, err := x.file.WriteAt(t.appendTo(buf[:0]), x.bytes); err != nil {
		return fmt.Errorf("segment: writing %s: %w", x.path, err)
	}
	x.bytes += AbortedTxnSize
	x.markDirty()
	var list []AbortedTxn
	if i == len(old) {
		list = append(old, t) // past what readers see, or a new array
	} else {
		list = slices.Insert(slices.Clone(old), i, t)
	}
	x.entries.Store(&list)
	if created && s.tmp == "" {
		if err := s.fsys.SyncDir(s.dir); err != nil {
			return fmt.Errorf("segment: syncing directory %s: %w: %w", s.dir, ErrSync, err)
		}
	}
	return nil
}

// SyncTxnIndex fsyncs the segment's .txnindex if entries were written
// since its last fsync; a failure is ErrSync. It is safe to call while
// another goroutine appends, as SyncLog is: the entries written before the
// call are durable when it returns. Sync does it too.
func (s *Segment) SyncTxnIndex() error {
	x := &s.txns
	x.mu.Lock()
	f, dirty := x.file, x.dirty
	x.dirty = false
	x.mu.Unlock()
	if f == nil || !dirty {
		return nil
	}
	if err := vfs.SyncData(f); err != nil {
		x.markDirty()
		return fmt.Errorf("segment: syncing %s: %w: %w", x.path, ErrSync, err)
	}
	return nil
}

// truncateTxns drops the entries whose LastOffset is at least offset, as
// Kafka's TransactionIndex.truncateTo does, with the damage loading found
// past them.
func (s *Segment) truncateTxns(offset int64) error {
	x := &s.txns
	old := s.AbortedTxns()
	n, _ := slices.BinarySearchFunc(old, offset, lastOffsetCmp)
	if n == len(old) && x.damage == nil {
		return nil
	}
	if x.file != nil {
		// The file may hold the entries in another order than by last
		// offset (see AppendAbortedTxn): the kept ones are written back
		// first, in order.
		var buf []byte
		for _, t := range old[:n] {
			buf = t.appendTo(buf)
		}
		if len(buf) > 0 {
			if _, err := x.file.WriteAt(buf, 0); err != nil {
				return fmt.Errorf("segment: writing %s: %w", x.path, err)
			}
		}
		if err := x.file.Truncate(int64(len(buf))); err != nil {
			return fmt.Errorf("segment: truncating %s: %w", x.path, err)
		}
		x.bytes = int64(len(buf))
		x.markDirty()
	}
	list := slices.Clone(old[:n])
	x.entries.Store(&list)
	x.damage = nil
	return nil
}

// closeTxns closes the .txnindex file.
func (s *Segment) closeTxns() {
	if s.txns.file != nil {
		_ = s.txns.file.Close()
	}
}
