// Package compaction is the core of Strata's log cleaner: it rewrites the
// sealed segments of a compacted log keeping the latest record of every
// key, as Kafka's LogCleaner does
// (core/src/main/scala/kafka/log/LogCleaner.scala). It holds no segments of
// its own, runs no goroutine and reads no clock, and renames no file but to
// discard the output of a failed cleaning: the partition decides when to
// clean, owns the segments, and swaps the cleaned ones in crash-safely
// (.cleaned → .swap → old to .deleted → final names, as Kafka's
// LocalLog.replaceSegments does).
//
// # A round
//
// The log is split by the cleaner checkpoint, firstDirty, into a clean
// section (already compacted) and a dirty one (written since). One round:
//
//	plan := compaction.Assess(infos, firstDirty, now, cfg)       // worth it? up to where?
//	m.Reset()
//	end, err := compaction.BuildMapAborted(m, segs, plan.FirstDirty, plan.FirstUncleanable, cfg.DecompressLimit, aborted)
//	for _, g := range compaction.Group(infos, end, segmentBytes, indexBytes) {
//		out, stats, err := compaction.Clean(segs[g.Start:g.End], create,
//			compaction.Round{Config: cfg, Map: m, End: end, Now: now, Aborted: aborted})
//		// swap out in for segs[g.Start:g.End]
//	}
//	// the checkpoint becomes end
//
// BuildMap maps each key of the dirty section to its latest offset, as far
// as the map's memory allows; end says how far that was, and the next round
// starts there. Group splits every segment below end, clean section
// included, into runs that each become one segment. Clean copies what
// survives of a run into new segments that keep the first one's base offset.
// The active segment is never cleaned.
//
// # What survives
//
// A record survives if it is not in an aborted transaction and either
// lies at or past end, or has a key, is the latest record of that key and
// is not a tombstone past its delete horizon. Key-less records below end
// are dropped. Offsets never change: cleaning leaves gaps, and batches
// keep their base and last offsets even when their first or last records
// go, so readers advance by a batch's last offset, not its last record's
// (as the javadoc of Kafka's DefaultRecordBatch.java says of compaction).
// A batch left empty is dropped, except the one that ends just before end
// and a producer's last batch when the caller names it
// (Round.ProducerLastOffsets, which Strata's partitions fill from their
// producer state): these stay as 61-byte empty
// batches.
//
// # Tombstones
//
// A tombstone (a record with a key and no value) is kept by the first
// cleaning that copies it, which stamps its batch with a delete horizon,
// now + DeleteRetention, in the batch's base timestamp (attribute bit 6,
// KIP-534, record timestamps unchanged). A later cleaning at or after the
// horizon drops it, along with every older record of its key. So a
// tombstone lives at least DeleteRetention after it is first cleaned, not
// after it is written, and longer still if the log is not cleaned again
// soon (KAFKA-8522). A consumer that reads the whole log within
// DeleteRetention of the first cleaning sees every deletion.
//
// # Transactions
//
// The cleaner follows transactions as Kafka's does (LogCleaner.scala's
// CleanedTransactionMetadata). The caller names the aborted transactions
// (Round.Aborted, BuildMapAborted: the partition's .txnindex entries) and
// keeps the cleaned range below the last stable offset, where every
// transaction is complete. The batches of an aborted transaction are
// dropped whole and never mapped, so an aborted record never supersedes a
// committed one; the batches of committed transactions are data. A marker
// (a control batch) stays while the cleaning meets records of its
// transaction, an ABORT marker with its .txnindex entry, copied into the
// cleaned segment; once it decides nothing it is stamped with a delete
// horizon, as a tombstone is, and a cleaning after that drops it.
//
// # Keys
//
// The offset map (OffsetMap) identifies a key by its 64-bit xxhash and then
// by its bytes, which it copies. Kafka keeps only an MD5 digest and accepts
// that a collision drops the newer value of a key; here two keys with the
// same hash are two entries. The price is the key bytes in the map's
// memory budget: a key costs SlotBytes / LoadFactor plus its length, about
// 43 bytes for a 16-byte key.
//
// # Caveats
//
// Compressed batches are read with Config.DecompressLimit, and a rebuilt
// one is compressed again with its codec (at the codec's default level, as
// Kafka's cleaner does). A batch whose records cannot be read here (a
// legacy magic 0/1 message, an unknown codec, records that decompress past
// the limit) is kept as it is, and its keys are not mapped.
package compaction
