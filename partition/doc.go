// Package partition is one partition's log: an ordered list of segments that
// assigns offsets from zero (dense as it appends; offsets only have to rise,
// so the gaps compaction and Kafka's transactions leave are kept), appends
// batches of every codec, reads from any offset, rolls to new segments,
// recovers after a crash, and applies a flush policy.
//
// # Offsets
//
// A partition holds the offsets [StartOffset, EndOffset): EndOffset is the
// next offset Append assigns, StartOffset the first that may be read
// (DeleteRecords moves it forward; retention removes whole segments below
// it). Readers see up to the HighWatermark: EndOffset under SyncNever and
// SyncEvery, the synced offset under SyncAlways. Reads below StartOffset or
// past EndOffset fail with ErrOutOfRange and the valid range; reading at
// the high watermark returns nothing, and Wait, NextWait and Records wait
// for more.
//
// # Writing
//
// Append encodes its records as one Kafka batch outside the partition's
// lock, then, under it, stamps the base offset into the batch header (the
// CRC does not cover it, so nothing is recomputed), rolls if Kafka's rules
// say so (size, record-time age, full index, relative-offset overflow), and
// writes the batch: a batch smaller than a page (a few small records),
// other than a segment's first, is copied into the segment file's shared
// memory mapping, written with zeros ahead of the appends on Linux (under
// SyncAlways from the segment's first append, see SyncAlways), its blocks
// reserved ahead by fallocate elsewhere — no system call — and a larger
// one is written with one pwrite (see Config.WriteCalls).
//
// # Producers
//
// A batch stamped with a producer id (AppendProduced, or a Kafka client's
// batch given to AppendRawBatch) is checked against the producer's state
// under the append lock, as a Kafka broker checks it: a retry of one of
// the producer's last 5 batches is answered with its original offset and
// writes nothing, an older epoch is ErrProducerFenced, a gap in its
// sequence ErrOutOfOrderSequence. WriteMarker ends a producer's
// transaction with a COMMIT or ABORT marker, and LastStableOffset stays at
// the first offset of the oldest transaction still open (until readers
// see the marker). WriteDecidedMarker is WriteMarker for a coordinator
// that records the outcome durably elsewhere and writes a lost marker
// again: under SyncAlways it does not wait for an fsync. The state is
// kept in Kafka's <offset>.snapshot files, taken at each roll and at Close,
// and Open loads the latest and reads the log after it.
//
// # Durability
//
//   - Append returns after the batch is written to the OS: it survives a
//     crash of the process.
//   - Power loss or OS crash: with SyncEvery (default 1 s) records older
//     than the interval survive; with SyncAlways, Append returns only after
//     fsync, and concurrent appenders share one fsync (group commit); with
//     SyncNever, nothing is ever fsynced (what follows about fsyncs holds
//     for the other two): the kernel writes the files back when it likes,
//     so after a power loss or OS crash any record, checkpoint or segment
//     written since the files were last written back may be missing or
//     cut short.
//   - A roll seals the old segment and fsyncs it soon after in the
//     background (as Kafka does), then checkpoints the recovery point: the
//     offset below which every segment is sealed and synced. Creating or
//     removing segment files fsyncs the directory. Open after a crash
//     recovers every segment from the recovery point on: it never serves a
//     torn or corrupt batch, cuts a torn tail at the last valid batch, and
//     rebuilds the untrusted indexes (see Open for which later segments
//     stay).
//   - A failed write leaves the partition as it was, and so does a full
//     disk: the append fails with an error matching syscall.ENOSPC, also
//     when the disk is full for a roll (the next append rolls again), and
//     appends go on once there is space. A recovery-point checkpoint that
//     cannot be written closes nothing either: it is written at the next
//     flush, roll or Close, and until then recovery after a crash starts
//     earlier. A failed fsync, a roll that fails otherwise, or a failed step
//     of Truncate or of a compaction's swap closes the partition to appends
//     with an error saying why: after a failed fsync the kernel may have
//     dropped the unsynced pages, so nothing more is promised.
//
// # Reading
//
// Readers never take the appenders' lock. They load an immutable snapshot of
// the segment list through an atomic pointer and hold a reference on the
// segment they read: a segment dropped meanwhile (by retention, compaction or
// Truncate) is closed, unmapped and unlinked only when its last reader lets
// go. ReadBatches copies whole batches out of the segment's memory mapping
// into the caller's buffer. A Reader iterates records in the mapping itself,
// batch by batch, without copying or allocating, holding its segment until it
// moves on or is closed; it is also the fast way to look a record up by
// offset (SetOffset, then Next): the offset index finds the batch, and the
// records before the one wanted are stepped over by their length prefixes
// (from a remembered position of every 8th record, in a large batch) rather
// than decoded. A batch's CRC is checked the first time the process reads it.
// A compressed batch is decompressed once per reader, into a buffer the
// Reader reuses; control batches are stepped over.
// Truncate rewrites a segment into new files renamed over the old ones, so
// no file ever shrinks under a reader.
package partition
