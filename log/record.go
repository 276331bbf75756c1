package log

import (
	"strconv"
	"time"
)

// Header is a record header: a key and an optional value.
type Header struct {
	// Key is the header key, UTF-8 by convention (not checked). It may be
	// empty but is never null on disk.
	Key string
	// Value is the header value. A nil Value is written as length -1 (null)
	// and reads back as nil; an empty non-nil Value is written as length 0
	// and reads back as empty and non-nil.
	Value []byte
}

// Record is one record of a batch.
//
// Records read by [RecordIter] alias the batch: Key, Value and every
// Header.Value point into the batch bytes (with their capacity clipped, so an
// append never writes into the batch) and stay valid as long as those bytes
// do; Header.Key strings are fresh copies.
type Record struct {
	// Offset is the record's offset in its partition. The encoders ignore it
	// in [EncodeBatch] (offsets are assigned from the batch's base offset)
	// and use it in [EncodeBatchWithHeader].
	Offset int64
	// Timestamp is the record's time, stored in whole milliseconds since the
	// Unix epoch (finer precision is truncated). [EncodeBatch] replaces a
	// zero Timestamp with [BatchOptions].Now. Decoded timestamps are in UTC.
	Timestamp time.Time
	// Key is the record key. A nil Key (no key) is written as length -1 and
	// reads back as nil; an empty non-nil Key reads back as empty.
	Key []byte
	// Value is the record value. A nil Value is a tombstone (length -1) and
	// reads back as nil; an empty non-nil Value reads back as empty.
	Value []byte
	// Headers are the record headers, in order.
	Headers []Header
}

// TimestampType tells what a batch's timestamps mean. It is bit 3 of the batch
// attributes.
type TimestampType int8

// Timestamp types.
const (
	// CreateTime: each record carries the time its producer created it.
	CreateTime TimestampType = 0
	// LogAppendTime: the time the log appended the batch, stored as the
	// batch's maxTimestamp, is the timestamp of every record.
	LogAppendTime TimestampType = 1
)

// String returns Kafka's name for t: "CreateTime" or "LogAppendTime".
func (t TimestampType) String() string {
	switch t {
	case CreateTime:
		return "CreateTime"
	case LogAppendTime:
		return "LogAppendTime"
	}
	return "TimestampType(" + strconv.Itoa(int(t)) + ")"
}

// Compression is a batch's compression codec: bits 0-2 of its attributes.
// This package reads and writes None, Gzip, Snappy, LZ4 and Zstd; the
// values 5 to 7, which Kafka does not have, it recognises to report them.
type Compression int8

// Compression codecs, numbered as Kafka numbers them.
const (
	None   Compression = 0
	Gzip   Compression = 1
	Snappy Compression = 2
	LZ4    Compression = 3
	Zstd   Compression = 4
)

// String returns Kafka's name for c: "none", "gzip", "snappy", "lz4" or
// "zstd".
func (c Compression) String() string {
	switch c {
	case None:
		return "none"
	case Gzip:
		return "gzip"
	case Snappy:
		return "snappy"
	case LZ4:
		return "lz4"
	case Zstd:
		return "zstd"
	}
	return "compression(" + strconv.Itoa(int(c)) + ")"
}
