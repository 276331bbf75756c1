// Package kafkadir lays out partition directories byte for byte as a Kafka
// broker writes them, for tests: segments of record batches (every codec,
// idempotent and transactional batches, control batches, compacted
// segments with gaps and delete horizons, legacy magic 0 and 1 messages),
// offset and time indexes written as Kafka before 4.0 writes them (one
// entry per append call, keyed by the call's last offset, at its first
// batch's position), and the files Kafka keeps beside them: the
// .txnindex of aborted transactions, producer-state .snapshot files and
// partition.metadata, which Strata reads, and leader-epoch-checkpoint,
// which it does not.
package kafkadir

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"time"

	"github.com/stratalog/strata/log"
)

// Opts are the batch-level fields of a batch Batch builds.
type Opts struct {
	Codec         log.Compression
	ProducerID    int64 // -1 for none (the zero value means 0: set it)
	ProducerEpoch int16
	BaseSequence  int32
	Transactional bool
	// DeleteHorizon, if not zero, stamps the batch as compaction does once
	// it has copied a tombstone: the horizon in BaseTimestamp.
	DeleteHorizon int64
	// LeaderEpoch is the partition leader epoch (outside the CRC).
	LeaderEpoch int32
}

// Batch returns a RecordBatch v2 holding recs at their own offsets (gaps
// allowed, as compaction leaves them) between base and last, with o's
// fields.
func Batch(base, last int64, recs []log.Record, o Opts) []byte {
	h := log.BatchHeader{
		BaseOffset:           base,
		PartitionLeaderEpoch: o.LeaderEpoch,
		Attributes:           int16(o.Codec),
		LastOffsetDelta:      int32(last - base),
		BaseTimestamp:        -1,
		MaxTimestamp:         -1,
		ProducerID:           o.ProducerID,
		ProducerEpoch:        o.ProducerEpoch,
		BaseSequence:         o.BaseSequence,
	}
	if o.Transactional {
		h.Attributes |= log.AttrTransactional
	}
	for i, r := range recs {
		ts := r.Timestamp.UnixMilli()
		if i == 0 {
			h.BaseTimestamp = ts
		}
		h.MaxTimestamp = max(h.MaxTimestamp, ts)
	}
	if o.DeleteHorizon != 0 {
		h.Attributes |= log.AttrDeleteHorizon
		h.BaseTimestamp = o.DeleteHorizon
	}
	b, err := log.EncodeBatchWithHeader(nil, h, recs)
	if err != nil {
		panic(fmt.Sprintf("kafkadir: %v", err))
	}
	return b
}

// Records returns n records at offsets from, from+1, …, keyed key-<i> with
// JSON-like values, stamped from ts on, one millisecond apart.
func Records(from int64, n int, ts time.Time) []log.Record {
	recs := make([]log.Record, n)
	for i := range recs {
		off := from + int64(i)
		recs[i] = log.Record{
			Offset:    off,
			Timestamp: ts.Add(time.Duration(i) * time.Millisecond),
			Key:       fmt.Appendf(nil, "key-%d", off%17),
			Value:     fmt.Appendf(nil, `{"offset":%d,"event":"order-placed","amount":%d.%02d,"currency":"EUR"}`, off, off*37%1000, off%100),
		}
		if off%5 == 0 {
			recs[i].Headers = []log.Header{{Key: "trace", Value: fmt.Appendf(nil, "%016x", off*7919)}}
		}
	}
	return recs
}

// Control returns a control batch at offset with one transaction marker:
// COMMIT (commit) or ABORT, for the producer and epoch, as a transaction
// coordinator writes it (key: version 0, type; value: version 0,
// coordinator epoch).
func Control(offset int64, commit bool, producerID int64, epoch int16, ts time.Time) []byte {
	typ := uint16(0)
	if commit {
		typ = 1
	}
	key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), typ)
	value := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), 7)
	h := log.BatchHeader{
		BaseOffset: offset, PartitionLeaderEpoch: 0, Attributes: log.AttrTransactional | log.AttrControl,
		BaseTimestamp: ts.UnixMilli(), MaxTimestamp: ts.UnixMilli(),
		ProducerID: producerID, ProducerEpoch: epoch, BaseSequence: -1,
	}
	b, err := log.EncodeBatchWithHeader(nil, h, []log.Record{{Offset: offset, Timestamp: ts, Key: key, Value: value}})
	if err != nil {
		panic(fmt.Sprintf("kafkadir: %v", err))
	}
	return b
}

// WithSection returns the uncompressed batch plain with its records section
// replaced by section, compressed with codec c (as another client
// compressed it): the length, the codec bits and the CRC-32C set to match.
func WithSection(plain, section []byte, c log.Compression) []byte {
	b := append(append([]byte(nil), plain[:log.BatchHeaderSize]...), section...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	b[22] = b[22]&^7 | byte(c)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// Legacy returns an uncompressed message of magic 0 or 1 at offset, as
// Kafka wrote them before 0.11 (magic 1 carries the timestamp).
func Legacy(magic byte, offset int64, ts time.Time, key, value []byte) []byte {
	body := []byte{magic, 0}
	if magic == 1 {
		body = binary.BigEndian.AppendUint64(body, uint64(ts.UnixMilli()))
	}
	for _, f := range [][]byte{key, value} {
		if f == nil {
			body = binary.BigEndian.AppendUint32(body, 0xffffffff)
			continue
		}
		body = binary.BigEndian.AppendUint32(body, uint32(len(f)))
		body = append(body, f...)
	}
	b := binary.BigEndian.AppendUint64(nil, uint64(offset))
	b = binary.BigEndian.AppendUint32(b, uint32(4+len(body)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(body))
	return append(b, body...)
}

// entryHeader decodes the header of a batch or legacy message this package
// built.
func entryHeader(b []byte) log.BatchHeader {
	h, err := log.ReadHeader(b)
	if err != nil {
		panic(fmt.Sprintf("kafkadir: %v", err))
	}
	return h
}

// Partition is a partition directory being laid out, one segment after
// another.
type Partition struct {
	// IndexIntervalBytes is Kafka's index.interval.bytes. Default 4096.
	IndexIntervalBytes int
	// PerBatchIndex indexes each batch as Kafka 4.0 does; by default an
	// entry covers a whole append call, as before 4.0.
	PerBatchIndex bool

	dir  string
	segs []*segmentFiles
}

// segmentFiles is one segment's files as they are being written.
type segmentFiles struct {
	base         int64
	log          []byte
	index        []byte
	timeIndex    []byte
	sinceIndex   int
	maxTS        int64
	offsetOfMax  int64
	lastTimeTS   int64
	hasTimeEntry bool
	txnIndex     []byte // the segment's .txnindex entries
}

// New starts laying out the partition directory dir (created).
func New(dir string) *Partition {
	return &Partition{IndexIntervalBytes: 4096, dir: dir}
}

// Roll starts a new segment at base.
func (p *Partition) Roll(base int64) {
	p.segs = append(p.segs, &segmentFiles{base: base, maxTS: -1})
}

// Abort records in the current segment's .txnindex that producer pid
// aborted its transaction over [first, last), with its ABORT marker at
// last (appended to this segment) and lso the last stable offset then, as
// a broker does when it appends the marker: a 34-byte entry, version 0.
func (p *Partition) Abort(pid, first, last, lso int64) {
	s := p.segs[len(p.segs)-1]
	be := binary.BigEndian
	b := be.AppendUint16(s.txnIndex, 0)
	for _, v := range []int64{pid, first, last, lso} {
		b = be.AppendUint64(b, uint64(v))
	}
	s.txnIndex = b
}

// Append writes entries (batches or legacy messages) to the current
// segment as one append call: the indexes get at most one entry for the
// call (keyed by its last offset, at its first entry's position) unless
// PerBatchIndex, as Kafka's LogSegment.append writes them.
func (p *Partition) Append(entries ...[]byte) {
	if len(p.segs) == 0 {
		p.Roll(entryHeader(entries[0]).BaseOffset)
	}
	s := p.segs[len(p.segs)-1]
	if p.PerBatchIndex {
		for _, e := range entries {
			s.append(p.IndexIntervalBytes, e)
		}
		return
	}
	s.append(p.IndexIntervalBytes, entries...)
}

func (s *segmentFiles) append(interval int, entries ...[]byte) {
	pos := len(s.log)
	var last int64
	size := 0
	for _, e := range entries {
		h := entryHeader(e)
		last = h.LastOffset()
		if h.MaxTimestamp > s.maxTS {
			s.maxTS, s.offsetOfMax = h.MaxTimestamp, h.LastOffset()
		}
		s.log = append(s.log, e...)
		size += len(e)
	}
	if s.sinceIndex > interval {
		s.index = binary.BigEndian.AppendUint32(s.index, uint32(last-s.base))
		s.index = binary.BigEndian.AppendUint32(s.index, uint32(pos))
		s.timeEntry()
		s.sinceIndex = 0
	}
	s.sinceIndex += size
}

// timeEntry appends the running max timestamp to the time index, if it
// rose.
func (s *segmentFiles) timeEntry() {
	if s.maxTS < 0 || (s.hasTimeEntry && s.maxTS <= s.lastTimeTS) {
		return
	}
	s.timeIndex = binary.BigEndian.AppendUint64(s.timeIndex, uint64(s.maxTS))
	s.timeIndex = binary.BigEndian.AppendUint32(s.timeIndex, uint32(s.offsetOfMax-s.base))
	s.lastTimeTS, s.hasTimeEntry = s.maxTS, true
}

// Files are the side files Write lays out besides the segments.
type Files struct {
	// TopicID is written to partition.metadata, Kafka's format; zero
	// writes none.
	TopicID [16]byte
	// Extras writes Kafka's leader-epoch-checkpoint, a .snapshot per
	// segment and a .txnindex per segment (empty unless Abort gave it
	// entries; without Extras only those with entries are written).
	Extras bool
	// MissingIndex leaves out the .index of the segments with these
	// bases, MissingTimeIndex their .timeindex.
	MissingIndex, MissingTimeIndex map[int64]bool
}

// Write writes the partition's files: each segment's .log, its indexes
// trimmed (the last segment's time index ends with the entry Kafka writes
// at close), and the side files f asks for. It returns the directory.
func (p *Partition) Write(f Files) (string, error) {
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return "", err
	}
	for _, s := range p.segs {
		s.timeEntry() // as a roll or close appends it
		name := fmt.Sprintf("%020d", s.base)
		files := map[string][]byte{".log": s.log, ".index": s.index, ".timeindex": s.timeIndex}
		if f.MissingIndex[s.base] {
			delete(files, ".index")
		}
		if f.MissingTimeIndex[s.base] {
			delete(files, ".timeindex")
		}
		if f.Extras {
			files[".snapshot"] = Snapshot(nil)
			files[".txnindex"] = nil
		}
		if len(s.txnIndex) > 0 {
			files[".txnindex"] = s.txnIndex
		}
		for suffix, b := range files {
			if err := os.WriteFile(filepath.Join(p.dir, name+suffix), b, 0o644); err != nil {
				return "", err
			}
		}
	}
	if f.TopicID != ([16]byte{}) {
		id := fmt.Sprintf("version: 0\ntopic_id: %s", encodeID(f.TopicID))
		if err := os.WriteFile(filepath.Join(p.dir, "partition.metadata"), []byte(id), 0o644); err != nil {
			return "", err
		}
	}
	if f.Extras {
		if err := os.WriteFile(filepath.Join(p.dir, "leader-epoch-checkpoint"), []byte("0\n1\n0 0\n"), 0o644); err != nil {
			return "", err
		}
	}
	return p.dir, nil
}

// ProducerEntry is one producer's entry of a producer-state snapshot, as
// Kafka's ProducerStateManager writes it: the producer's last batch
// (LastOffset -1 if its last write was a marker), and its transaction
// open in the partition (TxnFirstOffset -1 if none).
type ProducerEntry struct {
	ProducerID       int64
	Epoch            int16
	LastSequence     int32
	LastOffset       int64
	OffsetDelta      int32 // last offset - first offset of the last batch
	Timestamp        int64 // ms: max timestamp of the last batch
	CoordinatorEpoch int32
	TxnFirstOffset   int64
}

// Snapshot returns a producer-state snapshot (a <offset>.snapshot file) of
// the entries, as Kafka's ProducerStateManager.writeSnapshot writes one:
// version 1 (int16), the CRC-32C of what follows (uint32), the number of
// entries (int32), then each entry's fields in the order of ProducerEntry.
func Snapshot(entries []ProducerEntry) []byte {
	be := binary.BigEndian
	body := be.AppendUint32(nil, uint32(len(entries)))
	for _, e := range entries {
		body = be.AppendUint64(body, uint64(e.ProducerID))
		body = be.AppendUint16(body, uint16(e.Epoch))
		body = be.AppendUint32(body, uint32(e.LastSequence))
		body = be.AppendUint64(body, uint64(e.LastOffset))
		body = be.AppendUint32(body, uint32(e.OffsetDelta))
		body = be.AppendUint64(body, uint64(e.Timestamp))
		body = be.AppendUint32(body, uint32(e.CoordinatorEpoch))
		body = be.AppendUint64(body, uint64(e.TxnFirstOffset))
	}
	b := be.AppendUint16(nil, 1)
	b = be.AppendUint32(b, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	return append(b, body...)
}

// encodeID prints a topic id as Kafka does: URL-safe base64, no padding.
func encodeID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }
