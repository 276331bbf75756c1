// Package index implements Kafka's two memory-mapped segment indexes: the
// offset index (.index), which maps offsets to byte positions in the
// segment's .log file, and the time index (.timeindex), which maps
// timestamps to offsets. The files are byte-for-byte Kafka's.
//
// # Format
//
// An index file is an array of fixed-size big-endian entries, with no
// header, no padding and no checksum: a damaged index is rebuilt from the
// log, never repaired. Offsets are stored relative to the segment's base
// offset (the number in the file name), so they must satisfy
// 0 ≤ offset − base ≤ math.MaxInt32.
//
// Offset index entry, 8 bytes ([OffsetEntrySize]):
//
//	 0                   4                   8
//	+-------------------+-------------------+
//	| relative offset   | position          |
//	| int32             | int32             |
//	+-------------------+-------------------+
//
// Entries are strictly increasing in offset and in position. Entry (O, P)
// says that the batch (or append) ending with offset O starts at byte P of
// the log, so every record at offset O or above is at byte P or after.
//
// Time index entry, 12 bytes ([TimeEntrySize]):
//
//	 0                                       8                   12
//	+---------------------------------------+-------------------+
//	| timestamp (ms since the epoch)        | relative offset   |
//	| int64                                 | int32             |
//	+---------------------------------------+-------------------+
//
// Timestamps are strictly increasing, offsets non-decreasing. Entry (T, O)
// says that the largest timestamp in the segment up to offset O is T.
//
// # Sparse indexing
//
// Not every batch has an entry: the segment appends one when more than
// index.interval.bytes (4096) of log were written since the last entry,
// keyed by the last offset of the append and pointing at its start. So a
// lookup finds the entry at or below the target and the reader scans batch
// headers from there; the first batches of a segment have no entry at all,
// and a lookup below the first entry returns (base offset, position 0). The
// time index takes an entry at the same moments, (running max timestamp,
// offset of the batch that first reached it), only when the max timestamp
// grew.
//
// Both searches find what Kafka's do (the last entry at or below the
// target), but start differently: from where the target would lie if the
// keys rose evenly from the first entry to the last. An offset index's keys
// nearly do, so the guess is checked (the entries either side of a small
// window around it must bracket the target) and the binary search that
// follows stays within a few cache lines; a guess that misses only narrows
// the range, and costs four loads more than a plain binary search. Every
// lookup reads the first and the last entry; where the guess missed, the
// search prefers, like Kafka's, the last 8 KiB of entries (the "warm" tail,
// where in-sync readers look and whose pages stay in the page cache) when
// the answer lies there.
//
// # Files and crashes
//
// A writable index is mapped at maxBytes ([DefaultMaxBytes] by default),
// its file being left at its size: its blocks are reserved on disk
// (fallocate, which grows the file, by whole entries as Kafka sizes an
// index file) about a page or more ahead of its entries,
// so that an append that needs room the disk does not have fails with
// ENOSPC before anything is written, and the time index keeps the slot of
// its last entry reserved. The first entry in each page of the file is
// written with pwrite, the others in that page are copied into the mapping
// (one system call per page of entries; every entry with pwrite where
// blocks cannot be reserved); readers see both through the mapping. Kafka's AbstractIndex extends the file to maxBytes
// instead, and trims it at close: here an index reopened and closed without
// a new entry is not resized at all. A sealed one (Trim, Close) is
// truncated to its valid entries. One made by
// [DeferOffset] or [DeferTime] has no file until its first entry, or
// Create, makes it. Opening a file takes every
// whole entry in it as valid, as Kafka does, so only a cleanly closed
// (trimmed) file can be trusted: after a crash, the reserved room after the
// entries reads as zero entries.
// Callers rebuild the index of every segment that was not cleanly closed
// (Reset, then re-append while scanning the log); Check reports such a file
// as corrupt, so it can never be silently trusted.
//
// # Concurrency
//
// One writer (the segment, under its lock) and any number of lock-free
// readers. The entry count is an atomic: Append writes the entry's bytes
// (pwrite, which the mapping shows, or a copy into the mapping) and then
// stores the new count; a
// reader loads the count once and searches only that many entries, so it
// always sees a consistent prefix of the index.
//
// The mapping is never unmapped or remapped while readers may run: touching
// an unmapped slice is a crash, not an error. Trim shrinks the file but keeps
// the mapping, since readers touch only valid entries, which stay within the
// file; TruncateTo and Reset only lower the count. Only Close unmaps, so the
// caller must close an index only when no reader remains (reference-count
// segments, or delay the close as Kafka delays deletion).
//
// # Caveats
//
// A reader that loaded the count before TruncateTo or Reset may read the
// dropped entries. They stay valid memory while the file keeps its size,
// but an Append after the truncation rewrites them and a Trim after it puts
// them past the end of the file: truncate with readers excluded, or let them
// drain before the next Append or Trim.
//
// Keep one handle per file. In particular, close a read-only handle before
// reopening the file writable: the in-memory file system cannot grow a
// mapped file (the OS can, but two mappings of one index are never needed).
package index
