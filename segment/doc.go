// Package segment is one piece of a partition's log: a .log file of Kafka
// record batches with its sparse offset index (.index), time index
// (.timeindex) and aborted-transaction index (.txnindex), all named by the
// segment's base offset in 20 digits:
//
//	00000000000000368769.log        batches, Kafka RecordBatch v2, back to back
//	00000000000000368769.index      last offset of a batch → its byte position
//	00000000000000368769.timeindex  max timestamp so far → offset reaching it
//	00000000000000368769.txnindex   the transactions aborted by markers in the segment
//
// A .txnindex exists once a transaction is aborted in the segment (see
// AbortedTxn), and in every segment written under a temporary name (a
// rewrite's, a cleaning's), empty if it holds no entry; its entries are kept in memory too, for read_committed
// readers, and go with the segment through truncation, recovery, rewrites
// and deletion.
//
// # Writing
//
// A segment has one writer at a time. Append takes whole batches whose
// offsets are already stamped and writes them in one piece: an append
// smaller than a page, other than the segment's first, is copied into the
// .log file's shared mapping, the file grown ahead of it with written
// zeros (on Linux, for every append after the first; everywhere for all
// appends under Config.ZeroFill) or else with fallocate (the zeros past
// the last batch are trimmed by Seal and Close, and recovery stops at
// them); the first append, a larger one, or one that neither zeros nor
// reserved blocks reach is written with one pwrite. A batch gets an
// offset-index entry when more than IndexIntervalBytes (4096) bytes were
// written since the previous entry, and the time index gets the running max
// timestamp at the same moments. Seal writes the final time-index entry and
// trims both index files to their entries; Sync fsyncs the .log file and
// both index files. A segment whose .log holds at most IndexIntervalBytes
// has no index files at all: they are created by the append that takes it
// past that size.
//
// # Reading
//
// Reads take no lock and make no system call: the .log file is memory-mapped
// (a writable segment's mapping reserves address space up to MaxBytes, so the
// file grows into it without a remap). Read and View find the first batch
// whose last offset reaches the wanted offset — the offset index gives the
// largest entry at or below it, then only batch headers are scanned, their
// cache lines fetched at once — and return whole batches up to a byte budget;
// a Cursor returns them one at a time. Every batch returned is checked
// (header rules, CRC-32C, offsets that follow one another), so that damaged
// bytes are reported as ErrCorrupt with the file and position and never
// returned. The CRC of a batch is computed once per process: a segment
// remembers the prefix of its file known good (written by this process,
// recovered, or read through from the start), and marks each batch past it
// that a read has checked (one bit per 16 bytes of file). Damage that
// strikes bytes after they were checked goes unseen by reads, as it does in
// Kafka's broker. FindOffsetByTimestamp answers Kafka's ListOffsets by time.
//
// # Crashes
//
// Index files are memory-mapped, with room reserved past their entries,
// while a segment is writable, so after a crash they may hold zeros past
// their real entries and are never trusted: Recover checks every batch from the start, cuts the file at
// the first torn or damaged one and rebuilds both indexes. Open trusts the
// files of a segment that was closed cleanly, after a check of their shape.
// Deciding which segments need Recover (those after the partition's recovery
// point) is the partition's job.
//
// # Lifetime
//
// Memory mappings are released only by Close and Delete, which must not run
// while a reader uses the segment: the partition reference-counts segments.
// Seal shrinks the index files but keeps the mappings, so readers of a
// segment being sealed keep working. Recover shrinks the .log file under its
// mapping, so it too needs the segment to itself.
package segment
