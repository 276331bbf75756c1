// Package log is Kafka's log format: the Record and Header types and a codec
// for RecordBatch v2 (magic 2), the unit Kafka stores, replicates and serves.
// It works on byte slices only: no files, no goroutines. Batches are read
// and written in every codec Kafka has (gzip, snappy, lz4, zstd; see
// [Decoder] and [BatchOptions].Compression), and Kafka's legacy messages
// (magic 0 and 1) are recognized and checked but not read.
//
// # Batch layout
//
// All fixed-width integers are big-endian. Sizes are in bytes. The CRC covers
// the bytes marked on the left; baseOffset and partitionLeaderEpoch lie
// outside it so that they can be rewritten in place ([SetBaseOffset],
// [SetPartitionLeaderEpoch]).
//
//	offset size field                 meaning
//	     0    8 baseOffset            offset of the first record
//	     8    4 length                batch size - 12
//	    12    4 partitionLeaderEpoch  -1 for none
//	    16    1 magic                 2
//	    17    4 crc                   CRC-32C (Castagnoli) of [21, end)
//	  ┌ 21    2 attributes            bits below
//	  │ 23    4 lastOffsetDelta       last offset - baseOffset
//	  │ 27    8 baseTimestamp         first record's timestamp, or the delete horizon
//	  │ 35    8 maxTimestamp          largest record timestamp, or the log append time
//	  │ 43    8 producerId            -1 for none
//	  │ 51    2 producerEpoch         -1 for none
//	  │ 53    4 baseSequence          -1 for none
//	  │ 57    4 recordsCount          number of records
//	  └ 61    … records               recordsCount records back to back, nothing after
//
// Attributes (only the low byte is used):
//
//	bit    7  6              5        4              3              2..0
//	       0  deleteHorizon  control  transactional  logAppendTime  codec (0 = none)
//
// # Record layout
//
// Inside a batch, each record is a run of zig-zag varints (v: int32, at most
// 5 bytes; vl: int64, at most 10) and raw bytes:
//
//	length          v     bytes that follow, up to the end of the headers
//	attributes      int8  always 0
//	timestampDelta  vl    timestamp - baseTimestamp (ms)
//	offsetDelta     v     offset - baseOffset
//	keyLength       v     -1 for a nil key
//	key                   keyLength bytes
//	valueLength     v     -1 for a nil value (a tombstone)
//	value                 valueLength bytes
//	headerCount     v     0 or more, then for each header:
//	  keyLength     v     0 or more (never null)
//	  key                 keyLength bytes (UTF-8)
//	  valueLength   v     -1 for a nil value
//	  value               valueLength bytes
//
// For example the record at offset delta 0, timestamp delta 0, with key "key",
// value "value" and no headers is the 15 bytes
//
//	1c 00 00 00 06 6b 65 79 0a 76 61 6c 75 65 00
//
// # Reading
//
// [ReadHeader] decodes a header alone, for scanning a segment batch by batch,
// and [BatchIter] walks back-to-back batches. [CheckBatch] adds the CRC: the
// fast check for recovery. [Validate] adds a walk of every record.
// [RecordIter] and [Records] read the records of an uncompressed batch; a
// [Decoder] reads those of any batch, decompressing a compressed one once
// into a buffer it reuses.
//
// Decoding never panics and never allocates from a length it has not checked
// against the bytes that remain. Bytes that end early give [ErrIncomplete]
// (a torn tail), bytes that can never be valid give [ErrCorrupt], a batch in
// a codec Kafka does not have [ErrUnsupportedCompression] (so does a
// compressed one given to [NewRecordIter] rather than a [Decoder]), a legacy
// message [ErrUnsupportedFormat], and a batch that decompresses past the
// Decoder's limit [ErrTooLarge]. Decoding is strict: varints
// must be minimal, record attributes 0, every length and count consistent,
// so a batch that [Validate] accepts re-encodes to exactly the same bytes.
//
// # Aliasing
//
// Records read from a batch alias it: Key, Value and every Header.Value
// point into the batch bytes (capacity clipped to their length, so an append
// copies rather than overwrites) and are valid as long as those bytes are
// left unchanged. Copy them before reusing or unmapping the buffer.
// [RecordIter.Next] reuses the Headers slice of the Record it is given, and
// so overwrites the headers of the record read before. Reading allocates
// only for headers: a string per header key, and a longer Headers slice when
// the one given is too short.
//
// # Writing
//
// [EncodeBatch] encodes records into a new batch, in the append style of
// encoding/binary: it grows dst at most once and not at all when dst has room,
// and keeps no reference to the records. [EncodeBatchWithHeader] re-encodes a
// batch with a given header, as compaction does. A partition assigns offsets
// afterwards with [SetBaseOffset], outside the CRC, so a batch is encoded and
// checksummed once.
package log
