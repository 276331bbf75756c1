package index

import (
	"encoding/binary"
	"fmt"

	"github.com/stratalog/strata/vfs"
)

// TimeEntrySize is the size of a time index entry: an int64 timestamp in
// milliseconds and an int32 relative offset, big-endian.
const TimeEntrySize = 12

// NoTimestamp is the timestamp Time.Lookup and Time.LastEntry return when
// there is no entry, Kafka's RecordBatch.NO_TIMESTAMP.
const NoTimestamp = -1

// Time is a segment's time index (.timeindex file). Entry (T, O) says that
// the largest timestamp in the segment up to and including offset O is T, so
// every record with a timestamp above T comes after O. Timestamps are
// strictly increasing, offsets non-decreasing.
//
// Lookup, LastEntry, Entries, Entry, MaxEntries, Full and the other
// accessors may be called from any number of goroutines, also while the
// writer appends. MaybeAppend, TruncateTo, Reset, Sync, Trim and Close
// change the index and must be called by one goroutine at a time (the
// segment's writer); Close only once no reader remains.
type Time struct {
	m mapped
}

// OpenTime opens the time index file at path for the segment whose base
// offset is base (≥ 0). Writable, the file is created if missing, its entries
// as found (size / 12) are taken as valid and it is extended to maxBytes
// rounded down to a multiple of 12 (0 means DefaultMaxBytes); read-only, it
// is mapped at its size, which must be a multiple of 12. See OpenOffset.
//
// Writable or not, OpenTime reads the first and the last entry with pread
// and maps the file only when it is first needed: an entry in between
// read (Lookup, Check, TruncateTo) or an entry appended. A segment's open
// and its readers by offset need only the last entry, so a segment never
// searched by time costs no mapping of its time index. If that late
// mapping fails, MaybeAppend returns the error, Lookup finds no entry
// (NoTimestamp, Base()), which narrows no search, and TruncateTo reads the
// entries with pread instead.
func OpenTime(fsys vfs.FS, path string, base int64, maxBytes int, writable bool) (*Time, error) {
	x := &Time{}
	if err := x.m.open(fsys, path, base, TimeEntrySize, maxBytes, writable, true); err != nil {
		return nil, err
	}
	return x, nil
}

// DeferTime returns an empty time index for the file at path, for the
// segment whose base offset is base (≥ 0), without opening or creating the
// file: Kafka's LazyIndex
// (storage/src/main/java/org/apache/kafka/storage/internals/log/LazyIndex.java) likewise
// leaves an index's file alone until it is used. Writable, it takes entries
// as a writable index of maxBytes from OpenTime does, and creates, extends and
// maps its file (see Create) when an entry or a reservation first needs it,
// which can then fail as OpenTime can; until then Sync, Trim and Close
// touch no file. Read-only, it is sealed and stays empty. Creating the
// file does not sync its directory; the caller does (vfs.FS.SyncDir).
func DeferTime(fsys vfs.FS, path string, base int64, maxBytes int, writable bool) (*Time, error) {
	x := &Time{}
	if err := x.m.deferOpen(fsys, path, base, TimeEntrySize, maxBytes, writable); err != nil {
		return nil, err
	}
	return x, nil
}

// Create creates, extends and maps the file of a writable index from
// DeferTime that has none yet; otherwise it does nothing. It does not sync
// the directory.
func (x *Time) Create() error { return x.m.create() }

// OnDisk reports whether the index has its file: opened, or created since
// DeferTime.
func (x *Time) OnDisk() bool { return x.m.onDisk() }

// Path returns the index file's path.
func (x *Time) Path() string { return x.m.path }

// Base returns the segment's base offset, the offset relative offsets are
// relative to.
func (x *Time) Base() int64 { return x.m.base }

// Entries returns the number of entries.
func (x *Time) Entries() int { return x.m.entries() }

// MaxEntries returns the number of entries the index can hold: the mapped
// size / 12 while writable, Entries once sealed.
func (x *Time) MaxEntries() int { return int(x.m.limit.Load()) }

// Full reports whether no slot but the reserved last one is free (Kafka's
// isFull: entries ≥ maxEntries − 1), or the index is sealed. The last slot
// is kept for the entry a segment appends when it rolls or closes, with
// skipFullCheck.
func (x *Time) Full() bool { return x.m.full(1) }

// Entry returns entry i (0 ≤ i < Entries()): its timestamp and offset. It
// panics if i is out of range.
func (x *Time) Entry(i int) (timestamp int64, offset int64) {
	x.m.checkEntry(i, x.Entries())
	return x.entry(i)
}

// entry returns entry i, which must be valid.
func (x *Time) entry(i int) (timestamp int64, offset int64) {
	e := x.m.at(i)
	if e == nil {
		return NoTimestamp, x.m.base // unreadable (see mapped.at): no entry
	}
	return timeKey.get(e, 0), x.m.base + timeValue.get(e, 0)
}

// LastEntry returns the last entry, or (NoTimestamp, Base()) if the index is
// empty.
func (x *Time) LastEntry() (timestamp int64, offset int64) {
	n := x.Entries()
	if n == 0 {
		return NoTimestamp, x.m.base
	}
	return x.entry(n - 1)
}

// CanAppendOffset reports whether offset's relative offset fits an entry:
// 0 ≤ offset − base ≤ math.MaxInt32.
func (x *Time) CanAppendOffset(offset int64) bool {
	return x.m.fits(offset)
}

// MaybeAppend adds the entry (timestamp, offset) if timestamp is above the
// last entry's (or the index is empty), Kafka's maybeAppend; a timestamp at
// or below it is ignored, which makes the entry a segment appends on roll and
// again on close idempotent. An offset below the last entry's is
// ErrOutOfOrder, one that does not fit ErrOffsetOverflow, even when the
// timestamp would be ignored.
//
// A Full index returns ErrFull unless skipFullCheck, which lets the append
// use the reserved last slot; with no slot at all left it is ErrFull too.
// A sealed index returns ErrSealed.
//
// Blocks are reserved on disk ahead of the entries as for Offset.Append,
// and an append without skipFullCheck keeps the slot after its own
// reserved too: on a full disk it fails with an error wrapping
// syscall.ENOSPC and the index is as it was, while the entry with
// skipFullCheck still goes into the slot kept for it (see Reserve).
func (x *Time) MaybeAppend(timestamp int64, offset int64, skipFullCheck bool) error {
	if x.m.sealed.Load() {
		return errorf(ErrSealed, "append timestamp %d to sealed %s", timestamp, x.m.path)
	}
	if !x.m.fits(offset) {
		return x.m.overflowError(offset)
	}
	n := x.Entries()
	if n > 0 {
		lastTs, last := x.entry(n - 1)
		if offset < last {
			return errorf(ErrOutOfOrder, "offset %d below the last offset %d of %s", offset, last, x.m.path)
		}
		if timestamp <= lastTs {
			return nil
		}
	}
	keep := 1 // the slot after this entry, for the one with skipFullCheck
	if skipFullCheck {
		keep = 0
	}
	if int64(n) >= x.m.limit.Load()-int64(keep) {
		return errorf(ErrFull, "%s is full with %d entries", x.m.path, n)
	}
	e := x.m.entry[:TimeEntrySize]
	binary.BigEndian.PutUint64(e[0:8], uint64(timestamp))
	binary.BigEndian.PutUint32(e[8:12], uint32(offset-x.m.base))
	return x.m.put(n, keep, e)
}

// Reserve makes sure the slot after the last entry has its blocks reserved
// on disk, so that the entry appended with skipFullCheck when the segment
// rolls or closes cannot meet a full disk. Appends keep that slot reserved
// once it is: call Reserve before the segment takes records the index does
// not cover yet, and fail the append if it fails. On a full disk it fails
// with an error wrapping syscall.ENOSPC; it does nothing when the slot is
// reserved already, the index is sealed or read-only, or the file system
// cannot reserve blocks.
func (x *Time) Reserve() error { return x.m.reserve(x.Entries() + 1) }

// Lookup returns the entry with the largest timestamp at most ts, or
// (NoTimestamp, Base()) if there is none. Every record with a timestamp
// above the returned one has an offset above the returned offset.
func (x *Time) Lookup(ts int64) (timestamp int64, offset int64) {
	data, n := x.m.view(x.Entries())
	i := floor(data, n, timeKey, ts)
	if i < 0 {
		return NoTimestamp, x.m.base
	}
	return x.entry(i)
}

// TruncateTo drops the entries whose offset is at least offset. The file
// keeps its size; a sealed index's file is shrunk to match by Close. The
// caveats of Offset.TruncateTo apply.
func (x *Time) TruncateTo(offset int64) { x.m.truncateTo(timeValue, offset) }

// Reset drops every entry, as TruncateTo(Base()) does.
func (x *Time) Reset() { x.m.lower(0) }

// Check reads every entry and returns a *CorruptError (matching ErrCorrupt)
// for the first one whose timestamp is not above the previous entry's, whose
// offset is below the previous entry's, or whose offset is below the base
// offset. A file reopened after a crash fails it: the zero-filled slots
// reserved after its entries repeat timestamp 0.
func (x *Time) Check() error {
	n := x.Entries()
	data, err := x.m.mapNow()
	if err != nil {
		return err
	}
	prevTs, prevRel := int64(0), int64(0)
	for i := range n {
		ts, rel := timeKey.get(data, i), timeValue.get(data, i)
		var reason string
		switch {
		case rel < 0:
			reason = fmt.Sprintf("offset %d below the base offset %d", x.m.base+rel, x.m.base)
		case i > 0 && ts <= prevTs:
			reason = fmt.Sprintf("timestamp %d not above the previous entry's %d", ts, prevTs)
		case i > 0 && rel < prevRel:
			reason = fmt.Sprintf("offset %d below the previous entry's %d", x.m.base+rel, x.m.base+prevRel)
		}
		if reason != "" {
			return &CorruptError{Path: x.m.path, Entry: i, Pos: int64(i) * TimeEntrySize, Reason: reason}
		}
		prevTs, prevRel = ts, rel
	}
	return nil
}

// Sync makes the entries, and the file's size if Open or Trim changed it,
// durable (one fsync of the file). It does nothing to a read-only or
// closed index.
func (x *Time) Sync() error { return x.m.sync() }

// Trim seals the index as Offset.Trim does: the file is truncated to
// Entries()*12, the mapping kept, and MaybeAppend fails with ErrSealed.
// Append the roll entry (with skipFullCheck) before.
func (x *Time) Trim() error { return x.m.trim() }

// Close trims a writable index (see Trim), unmaps it and closes the file.
// It does not sync, and does not append the roll entry. Errors, no readers
// and idempotence are as for Offset.Close.
func (x *Time) Close() error { return x.m.close() }
