package index

import (
	"encoding/binary"
	"fmt"

	"github.com/stratalog/strata/vfs"
)

// OffsetEntrySize is the size of an offset index entry: an int32 relative
// offset and an int32 position, big-endian.
const OffsetEntrySize = 8

// Offset is a segment's offset index (.index file): a sparse map from record
// offsets to byte positions of batches in the segment's .log file.
//
// Lookup, Entries, Entry, MaxEntries, Full and the other accessors may be
// called from any number of goroutines, also while the writer appends.
// Append, TruncateTo, Reset, Sync, Trim and Close change the index and must
// be called by one goroutine at a time (the segment's writer); Close only
// once no reader remains.
type Offset struct {
	m mapped
}

// OpenOffset opens the offset index file at path for the segment whose base
// offset is base (≥ 0).
//
// Writable, the file is created if missing; every entry in the file as found
// (its size / 8, rounded down) is taken as valid — call Reset if the file
// was not cleanly closed, or Check to test it — and its mapping has room
// for maxBytes rounded down to a multiple of 8 (never fewer than its
// entries). A maxBytes of 0 means DefaultMaxBytes.
//
// Creating the file does not sync its directory; the caller does
// (vfs.FS.SyncDir).
//
// Read-only (writable false), the file must exist; it is mapped at its
// current size, which must be a multiple of 8 (else a *CorruptError), and
// its entries are not checked (see Check). maxBytes is ignored.
//
// Writable or not, OpenOffset reads the first and the last entry with
// pread and maps the file only when it is first needed: an entry in
// between read (a Lookup that the two ends do not answer, Check,
// TruncateTo) or an entry appended. A segment's open and a lookup at or
// past the last entry's offset (the newest records) need only the ends, so
// a segment that is opened and read at its end costs no mapping of its
// offset index. If that late mapping fails, Append returns the error, the
// index narrows no lookup (Lookup returns the base offset at position 0),
// and Check returns the error.
func OpenOffset(fsys vfs.FS, path string, base int64, maxBytes int, writable bool) (*Offset, error) {
	x := &Offset{}
	if err := x.m.open(fsys, path, base, OffsetEntrySize, maxBytes, writable, true); err != nil {
		return nil, err
	}
	return x, nil
}

// DeferOffset returns an empty offset index for the file at path, for the
// segment whose base offset is base (≥ 0), without opening or creating the
// file: Kafka's LazyIndex
// (storage/src/main/java/org/apache/kafka/storage/internals/log/LazyIndex.java) likewise
// leaves an index's file alone until it is used. Writable, it takes entries
// as OpenOffset's writable index of maxBytes does, and creates, extends and
// maps its file (see Create) when an entry or a reservation first needs it,
// which can then fail as OpenOffset can; until then Sync, Trim and Close
// touch no file. Read-only, it is sealed and stays empty. Creating the
// file does not sync its directory; the caller does (vfs.FS.SyncDir).
func DeferOffset(fsys vfs.FS, path string, base int64, maxBytes int, writable bool) (*Offset, error) {
	x := &Offset{}
	if err := x.m.deferOpen(fsys, path, base, OffsetEntrySize, maxBytes, writable); err != nil {
		return nil, err
	}
	return x, nil
}

// Create creates, extends and maps the file of a writable index from
// DeferOffset that has none yet; otherwise it does nothing. It does not sync
// the directory.
func (x *Offset) Create() error { return x.m.create() }

// OnDisk reports whether the index has its file: opened, or created since
// DeferOffset.
func (x *Offset) OnDisk() bool { return x.m.onDisk() }

// Path returns the index file's path.
func (x *Offset) Path() string { return x.m.path }

// Base returns the segment's base offset, the offset relative offsets are
// relative to.
func (x *Offset) Base() int64 { return x.m.base }

// Entries returns the number of entries.
func (x *Offset) Entries() int { return x.m.entries() }

// MaxEntries returns the number of entries the index can hold: the mapped
// size / 8 while writable, Entries once sealed.
func (x *Offset) MaxEntries() int { return int(x.m.limit.Load()) }

// Full reports whether Append would return ErrFull or ErrSealed.
func (x *Offset) Full() bool { return x.m.full(0) }

// sizeBytes returns the size of the valid entries, Entries()*8.
func (x *Offset) sizeBytes() int { return x.Entries() * OffsetEntrySize }

// Entry returns entry i (0 ≤ i < Entries()): its offset and position. It
// panics if i is out of range.
func (x *Offset) Entry(i int) (offset int64, position int32) {
	x.m.checkEntry(i, x.Entries())
	return x.entry(i)
}

// entry returns entry i, which must be valid.
func (x *Offset) entry(i int) (offset int64, position int32) {
	e := x.m.at(i)
	if e == nil {
		return x.m.base, 0 // unreadable (see mapped.at): a bound that narrows nothing
	}
	return x.m.base + offsetKey.get(e, 0), int32(offsetValue.get(e, 0))
}

// lastOffset returns the last entry's offset, or the base offset if the
// index is empty.
func (x *Offset) lastOffset() int64 {
	n := x.Entries()
	if n == 0 {
		return x.m.base
	}
	offset, _ := x.entry(n - 1)
	return offset
}

// CanAppendOffset reports whether offset's relative offset fits an entry:
// 0 ≤ offset − base ≤ math.MaxInt32. A segment rolls before appending a
// batch whose last offset does not.
func (x *Offset) CanAppendOffset(offset int64) bool {
	return x.m.fits(offset)
}

// Append adds the entry (offset, position): the batch holding offset starts
// at position in the log. offset must be above the last entry's offset
// (ErrOutOfOrder), and fit (ErrOffsetOverflow); position must be above the
// last entry's position and not negative (ErrOutOfOrder). An index that is
// full returns ErrFull, one that is sealed ErrSealed.
//
// The file is sparse: its blocks are reserved on disk ahead of the entries
// (fallocate, a page or more at a time), and an append that needs a
// reservation the disk has no room for fails with an error wrapping
// syscall.ENOSPC. Where the file system cannot reserve blocks, writing the
// entry may instead fail on a full disk. Either way the index is as it
// was.
//
// The entry is visible to readers once Append returns.
func (x *Offset) Append(offset int64, position int32) error {
	if x.m.sealed.Load() {
		return errorf(ErrSealed, "append offset %d to sealed %s", offset, x.m.path)
	}
	if !x.m.fits(offset) {
		return x.m.overflowError(offset)
	}
	n := x.Entries()
	if n > 0 {
		last, lastPos := x.entry(n - 1)
		if offset <= last {
			return errorf(ErrOutOfOrder, "offset %d not above the last offset %d of %s", offset, last, x.m.path)
		}
		if position <= lastPos {
			return errorf(ErrOutOfOrder, "position %d not above the last position %d of %s", position, lastPos, x.m.path)
		}
	} else if position < 0 {
		return errorf(ErrOutOfOrder, "negative position %d for %s", position, x.m.path)
	}
	if int64(n) >= x.m.limit.Load() {
		return errorf(ErrFull, "%s is full with %d entries", x.m.path, n)
	}
	e := x.m.entry[:OffsetEntrySize]
	binary.BigEndian.PutUint32(e[0:4], uint32(offset-x.m.base))
	binary.BigEndian.PutUint32(e[4:8], uint32(position))
	return x.m.put(n, 0, e)
}

// Lookup returns the entry with the largest offset at most target, or
// (Base(), 0) if there is none. The batch holding target starts at or after
// the returned position.
func (x *Offset) Lookup(target int64) (offset int64, position int32) {
	if i, _ := x.Floor(target); i >= 0 {
		return x.entry(i)
	}
	return x.m.base, 0
}

// Floor returns the slot of the entry Lookup returns, -1 if there is none,
// and the number of entries it searched: the caller reads that entry, and
// the one after it if slot+1 < entries, with Entry. The batch holding target
// starts at or after the first's position and ends at or before the end of
// the batch the second points at.
func (x *Offset) Floor(target int64) (slot, entries int) {
	n := x.Entries()
	if target < x.m.base {
		return -1, n
	}
	if slot, ok := x.m.floorAtEnds(n, offsetKey, target-x.m.base); ok {
		return slot, n
	}
	data, k := x.m.view(n)
	return floor(data, k, offsetKey, target-x.m.base), k
}

// lookupPosition returns the first entry whose position is at least
// position, and false if there is none: Kafka's fetchUpperBoundOffset,
// which bounds a read of the log bytes up to position by offset.
func (x *Offset) lookupPosition(position int64) (offset int64, pos int32, ok bool) {
	n := x.Entries()
	data, k := x.m.view(n)
	i := ceil(data, k, offsetValue, position)
	if i == k {
		return 0, 0, false
	}
	offset, pos = x.entry(i)
	return offset, pos, true
}

// TruncateTo drops the entries whose offset is at least offset. The file
// keeps its size; a sealed index's file is shrunk to match by Close.
//
// Readers that loaded the entry count before must not run concurrently
// with a TruncateTo that is followed by an Append, which rewrites the slots
// they may read.
func (x *Offset) TruncateTo(offset int64) { x.m.truncateTo(offsetKey, offset) }

// Reset drops every entry, as TruncateTo(Base()) does.
func (x *Offset) Reset() { x.m.lower(0) }

// Check reads every entry and returns a *CorruptError (matching ErrCorrupt)
// for the first one that is not above the one before it in both offset and
// position, or whose offset is below the base offset or position negative.
// A file reopened after a crash fails it: the zero-filled slots reserved
// after its entries repeat (Base(), 0).
func (x *Offset) Check() error {
	n := x.Entries()
	data, err := x.m.mapNow()
	if err != nil {
		return err
	}
	prevRel, prevPos := int64(-1), int64(-1)
	for i := range n {
		rel, pos := offsetKey.get(data, i), offsetValue.get(data, i)
		var reason string
		switch {
		case rel < 0:
			reason = fmt.Sprintf("offset %d below the base offset %d", x.m.base+rel, x.m.base)
		case pos < 0:
			reason = fmt.Sprintf("negative position %d", pos)
		case i > 0 && rel <= prevRel:
			reason = fmt.Sprintf("offset %d not above the previous entry's %d", x.m.base+rel, x.m.base+prevRel)
		case i > 0 && pos <= prevPos:
			reason = fmt.Sprintf("position %d not above the previous entry's %d", pos, prevPos)
		}
		if reason != "" {
			return &CorruptError{Path: x.m.path, Entry: i, Pos: int64(i) * OffsetEntrySize, Reason: reason}
		}
		prevRel, prevPos = rel, pos
	}
	return nil
}

// Sync makes the entries, and the file's size if Open or Trim changed it,
// durable (one fsync of the file). It does nothing to a read-only or
// closed index.
func (x *Offset) Sync() error { return x.m.sync() }

// Trim seals the index: it truncates the file to the valid entries
// (Entries()*8) and makes every later Append fail with ErrSealed. The
// mapping is kept, so concurrent readers are safe: they touch only valid
// entries, which stay within the file. Trim does nothing to a read-only or
// closed index, and may be repeated (after TruncateTo, say).
//
// A reader that loaded the entry count before a TruncateTo may still touch
// the dropped entries; do not Trim after a TruncateTo while such a reader
// may run, since the dropped entries' pages are then past the end of the
// file.
func (x *Offset) Trim() error { return x.m.trim() }

// Close trims a writable index (see Trim), unmaps it and closes the file.
// It does not sync: call Sync first for durability. If it returns an error
// the file may be left untrimmed: treat the segment as not cleanly closed.
// No reader may use the index during or after Close. Close is idempotent:
// a second call does nothing and returns nil.
func (x *Offset) Close() error { return x.m.close() }
