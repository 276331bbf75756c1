package partition

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// encodeBuffers recycles the buffers batches are encoded into, so that a
// steady stream of appends allocates nothing.
var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

// Append appends records as one batch and returns the offset assigned to the
// first; the others follow densely. Each record's Offset is ignored. Its
// Timestamp is kept under CreateTime, or set to the append time if it is
// zero; under LogAppendTime every record gets the append time.
//
// The batch is encoded once (outside the partition's lock), stamped with its
// offsets without recomputing its CRC, and written to the segment file in
// one piece (copied into its mapping, or one pwrite; see Config.WriteCalls).
// Append returns once the batch is in the OS (it survives a crash of the
// process); under SyncAlways it returns only after an fsync, shared with
// concurrent appenders (group commit).
//
// No records is ErrEmptyBatch; a batch larger than MaxBatchBytes is
// ErrBatchTooLarge; neither changes the log. A failed write leaves the
// partition as it was and usable, and so does a full disk (an error that
// matches syscall.ENOSPC), also when it fails a roll: the next append rolls
// again. A failed fsync, or a roll that fails otherwise, closes the
// partition to appends (ErrClosed, wrapping the cause): after a failed fsync
// nothing can be promised about unsynced data.
func (p *Partition) Append(records []log.Record) (int64, error) {
	return p.AppendWith(records, p.cfg.Compression, p.cfg.CompressionLevel)
}

// AppendWith is Append with the records compressed with codec c at level
// (0: its default), unless the partition forces its own
// (Config.ForceCompression). A batch that compression would not make
// smaller is written uncompressed.
func (p *Partition) AppendWith(records []log.Record, c log.Compression, level int) (int64, error) {
	return p.appendRecords(records, c, level, condition{end: anyEnd})
}

// appendRecords encodes records as one batch into a pooled buffer and
// appends it if cond holds. A condition on a key builds the key index
// first, and again if a truncation drops it before the append.
func (p *Partition) appendRecords(records []log.Record, c log.Compression, level int, cond condition) (int64, error) {
	bufp := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(bufp)
	b, err := p.EncodeWith((*bufp)[:0], records, c, level)
	*bufp = b.bytes[:0]
	if err != nil {
		return 0, err
	}
	for {
		if cond.key != nil {
			if err := p.buildKeys(); err != nil {
				return 0, err
			}
		}
		a, err := p.appendEncoded(b.bytes, &b.header, cond, records)
		if err != errKeysDropped {
			return a.base, err
		}
	}
}

// EncodedBatch is a batch that Encode made for a partition, ready for
// AppendEncoded.
type EncodedBatch struct {
	bytes  []byte
	header log.BatchHeader
}

// Bytes returns the batch's bytes: the buffer given to Encode, grown if it
// had to be. AppendEncoded does not keep them, so once it has returned the
// buffer may be reused (as Bytes()[:0]) for the next Encode.
func (b EncodedBatch) Bytes() []byte { return b.bytes }

// Encode encodes records as one batch into dst (reused if large enough)
// with the partition's timestamp policy, and checks it against
// MaxBatchBytes, MaxTimestampSkew and, in a compacted partition, the need
// for keys, without touching the log: a caller writing to several
// partitions encodes every batch first, so that bad input fails before
// anything is written. No records is ErrEmptyBatch; a key-less record in a
// compacted partition is ErrNoKey; a timestamp too far ahead is
// ErrTimestampTooFarAhead; too many bytes is ErrBatchTooLarge.
func (p *Partition) Encode(dst []byte, records []log.Record) (EncodedBatch, error) {
	return p.EncodeWith(dst, records, p.cfg.Compression, p.cfg.CompressionLevel)
}

// EncodeWith is Encode with the records compressed with codec c at level
// (0: its default), unless the partition forces its own
// (Config.ForceCompression). A codec or level out of range is
// ErrInvalidConfig.
func (p *Partition) EncodeWith(dst []byte, records []log.Record, c log.Compression, level int) (EncodedBatch, error) {
	return p.encode(dst, records, c, level, nil)
}

// encode is EncodeWith stamping the batch with pb's producer fields, if pb
// is not nil.
func (p *Partition) encode(dst []byte, records []log.Record, c log.Compression, level int, pb *ProducerBatch) (EncodedBatch, error) {
	if p.cfg.ForceCompression {
		c, level = p.cfg.Compression, p.cfg.CompressionLevel
	}
	if err := log.CheckLevel(c, level); err != nil {
		return EncodedBatch{bytes: dst}, fmt.Errorf("partition: append to %s: %w: %w", p.name, ErrInvalidConfig, err)
	}
	if len(records) == 0 {
		return EncodedBatch{bytes: dst}, fmt.Errorf("partition: append to %s: %w", p.name, ErrEmptyBatch)
	}
	if p.cfg.Compacted {
		for i := range records {
			if records[i].Key == nil {
				return EncodedBatch{bytes: dst}, fmt.Errorf("partition: record %d to compacted %s: %w", i, p.name, ErrNoKey)
			}
		}
	}
	now := p.cfg.Now().UnixMilli()
	opts := log.BatchOptions{
		TimestampType:    p.cfg.TimestampType,
		Now:              now,
		Compression:      c,
		CompressionLevel: level,
	}
	if pb != nil {
		opts.Idempotent, opts.Transactional = true, pb.Transactional
		opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence = pb.ID, pb.Epoch, pb.Seq
	}
	b, h, err := log.EncodeBatchHeader(dst, records, opts)
	if err != nil {
		return EncodedBatch{bytes: b}, fmt.Errorf("partition: append to %s: %w", p.name, err)
	}
	// Under CreateTime the header's MaxTimestamp is the latest record's
	// (a zero timestamp became now, which is within the limit), so the
	// records are looked at only to name the one that is too far ahead.
	if limit, ok := p.timestampLimit(now); ok && h.MaxTimestamp > limit {
		return EncodedBatch{bytes: b}, p.tooFarAhead(records, limit)
	}
	if len(b) > p.cfg.MaxBatchBytes {
		return EncodedBatch{bytes: b}, fmt.Errorf("partition: batch of %d bytes to %s is over the limit of %d: %w", len(b), p.name, p.cfg.MaxBatchBytes, ErrBatchTooLarge)
	}
	return EncodedBatch{bytes: b, header: h}, nil
}

// timestampLimit returns the latest CreateTime timestamp (ms) that
// MaxTimestampSkew lets a batch carry at time now, and false if there is no
// limit (LogAppendTime, or the check turned off).
func (p *Partition) timestampLimit(now int64) (int64, bool) {
	if p.cfg.TimestampType != log.CreateTime || p.cfg.MaxTimestampSkew < 0 {
		return 0, false
	}
	return now + p.cfg.MaxTimestampSkew.Milliseconds(), true
}

// tooFarAhead returns ErrTimestampTooFarAhead naming the first of records
// stamped later than limit (ms).
func (p *Partition) tooFarAhead(records []log.Record, limit int64) error {
	for i := range records {
		if ts := records[i].Timestamp; !ts.IsZero() && ts.UnixMilli() > limit {
			return fmt.Errorf("partition: record %d to %s is stamped %s, more than %v ahead of the clock: %w",
				i, p.name, ts.UTC().Format(time.RFC3339Nano), p.cfg.MaxTimestampSkew, ErrTimestampTooFarAhead)
		}
	}
	return fmt.Errorf("partition: a record to %s is more than %v ahead of the clock: %w", p.name, p.cfg.MaxTimestampSkew, ErrTimestampTooFarAhead)
}

// AppendEncoded appends a batch from Encode and returns its first offset.
// See Append. A batch from EncodeProduced is checked as AppendProduced
// says; a duplicate returns the original batch's first offset.
func (p *Partition) AppendEncoded(b EncodedBatch) (int64, error) {
	base, _, err := p.AppendEncodedProduced(b)
	return base, err
}

// AppendRawBatch appends one encoded batch (log.EncodeBatch's output, or a
// batch from Kafka, compressed or not), stamping its base offset into it,
// and returns that offset. See Append. A batch over MaxBatchBytes is
// ErrBatchTooLarge before anything else. The batch is checked whole first
// (its CRC, then every record, decompressed), since lookups later step
// over its records by their lengths, and the partition's rules apply as
// they do to Append: a compacted partition refuses a record without a key
// (ErrNoKey), CreateTime refuses a batch stamped further ahead than
// MaxTimestampSkew, LogAppendTime stamps the batch with the append time
// (recomputing its CRC), and with ForceCompression a batch of another codec
// is re-encoded with the partition's (log.Recompress). A refused batch is
// ErrCorrupt or the rule's error, and changes nothing.
//
// A batch with a producer id (Kafka's idempotent and transactional
// batches, and transaction markers) is checked against the producer's
// state as AppendRawBatchProduced says; a duplicate of one of the
// producer's last batches writes nothing and returns that batch's offset.
func (p *Partition) AppendRawBatch(batch []byte) (int64, error) {
	base, _, err := p.AppendRawBatchProduced(batch)
	return base, err
}

// appendRaw is AppendRawBatch, reporting a duplicate.
func (p *Partition) appendRaw(batch []byte) (appendResult, error) {
	if len(batch) > p.cfg.MaxBatchBytes {
		// Before any decompression, as Kafka checks max.message.bytes
		// against the batch it was sent.
		return appendResult{}, fmt.Errorf("partition: batch of %d bytes to %s is over the limit of %d: %w", len(batch), p.name, p.cfg.MaxBatchBytes, ErrBatchTooLarge)
	}
	d := decoders.Get().(*log.Decoder)
	defer func() {
		d.Idle(pooledDecoderBytes)
		decoders.Put(d)
	}()
	d.Limit = p.cfg.maxDecompress()
	h, err := d.Validate(batch)
	switch {
	case err != nil:
		return appendResult{}, fmt.Errorf("partition: append to %s: %w", p.name, err)
	case h.Size() != len(batch):
		return appendResult{}, fmt.Errorf("partition: append to %s: %d bytes after the batch: %w", p.name, len(batch)-h.Size(), log.ErrCorrupt)
	}
	if p.cfg.Compacted {
		it, _ := d.Iter(batch, h) // validated, and decompressed: cannot fail
		var r log.Record
		for i := 0; it.Next(&r); i++ {
			if r.Key == nil {
				return appendResult{}, fmt.Errorf("partition: record %d to compacted %s: %w", i, p.name, ErrNoKey)
			}
		}
	}
	now := p.cfg.Now().UnixMilli()
	if limit, ok := p.timestampLimit(now); ok && h.MaxTimestamp > limit {
		return appendResult{}, fmt.Errorf("partition: a batch to %s is stamped %d, more than %v ahead of the clock: %w",
			p.name, h.MaxTimestamp, p.cfg.MaxTimestampSkew, ErrTimestampTooFarAhead)
	}
	if p.cfg.ForceCompression && h.Compression() != p.cfg.Compression {
		bufp := encodeBuffers.Get().(*[]byte)
		defer encodeBuffers.Put(bufp)
		if batch, err = log.Recompress((*bufp)[:0], d, batch, h, p.cfg.Compression, p.cfg.CompressionLevel); err != nil {
			return appendResult{}, fmt.Errorf("partition: append to %s: %w", p.name, err)
		}
		// appendEncoded keeps none of the buffer: it goes back to the pool.
		*bufp = batch[:0]
		h, _ = log.ReadHeader(batch) // just encoded: cannot fail
	}
	if p.cfg.TimestampType == log.LogAppendTime {
		log.SetLogAppendTime(batch, now)
		h, _ = log.ReadHeader(batch) // read above: cannot fail
	}
	if err := checkProducerFields(h); err != nil {
		return appendResult{}, fmt.Errorf("partition: append to %s: %w", p.name, err)
	}
	return p.appendEncoded(batch, &h, condition{end: anyEnd}, nil)
}

// decoders recycles the Decoders that appends check compressed batches
// with.
var decoders = sync.Pool{New: func() any { return new(log.Decoder) }}

// pooledDecoderBytes is the largest buffer a pooled Decoder keeps: a batch
// that decompressed to more (up to the partition's limit, 1 GiB at most)
// is not held in memory for the next append.
const pooledDecoderBytes = 4 << 20

// appendResult is what an append did: the offset of the batch's first
// record, and whether the batch was a producer's retry of one it had
// written (dup), whose offsets base and next are then.
type appendResult struct {
	base int64
	next int64 // dup only: the offset after the original batch
	dup  bool
}

// appendEncoded appends a batch whose header h has been checked, if cond
// holds. records are the batch's records if the caller has them (nil
// otherwise), for the key index.
func (p *Partition) appendEncoded(batch []byte, h *log.BatchHeader, cond condition, records []log.Record) (appendResult, error) {
	if len(batch) > p.cfg.MaxBatchBytes {
		return appendResult{}, fmt.Errorf("partition: batch of %d bytes to %s is over the limit of %d: %w", len(batch), p.name, p.cfg.MaxBatchBytes, ErrBatchTooLarge)
	}
	p.mu.Lock()
	a, err := p.appendMuLocked(batch, h, cond, records)
	p.mu.Unlock()
	if err != nil {
		return appendResult{}, err
	}
	if a.dup {
		// The original may still be on its way to the disk (SyncAlways):
		// the retry is answered once it is as durable as an append.
		if p.cfg.Sync.Mode == SyncModeAlways {
			if err := p.syncTo(a.next); err != nil {
				return appendResult{}, err
			}
		}
		return a, nil
	}
	base := a.base
	switch {
	case p.cfg.Sync.Mode == SyncModeAlways && cond.decided:
		// Not waited for durable: readers see it at once.
		p.addDecided(base)
	case p.cfg.Sync.Mode == SyncModeAlways:
		// Readers see the batch once it is durable (HighWatermark): the
		// fsync wakes them.
		if err := p.syncTo(h.NextOffset() - h.BaseOffset + base); err != nil {
			return appendResult{}, err
		}
	default:
		p.appended.broadcast()
	}
	return a, nil
}

// appendMuLocked stamps and writes the batch, rolling first if needed, if
// cond holds, and enters its keys into the key index if there is one. The
// caller holds mu.
func (p *Partition) appendMuLocked(batch []byte, h *log.BatchHeader, cond condition, records []log.Record) (appendResult, error) {
	if err := p.writableMuLocked(); err != nil {
		return appendResult{}, fmt.Errorf("partition: append to %s: %w", p.name, err)
	}
	base := p.end.Load()
	if err := p.checkMuLocked(base, cond); err != nil {
		return appendResult{}, err
	}
	var op producerOp
	if h.ProducerID != noProducer {
		var dup producerBatchMeta
		var err error
		if op, dup, err = p.checkProducerMuLocked(batch, *h); err != nil {
			return appendResult{}, fmt.Errorf("partition: append to %s: %w", p.name, err)
		}
		if op.dup {
			return appendResult{base: dup.firstOffset, next: dup.lastOffset + 1, dup: true}, nil
		}
	}
	log.SetBaseOffset(batch, base)
	stamped := *h
	stamped.BaseOffset = base
	h = &stamped
	last := base + int64(h.LastOffsetDelta)
	active := p.mu.active.seg
	if p.shouldRoll(active, len(batch), h.MaxTimestamp, last) {
		if err := p.rollMuLocked(base); err != nil {
			return appendResult{}, err
		}
		active = p.mu.active.seg
	}
	err := active.AppendHeader(batch, h)
	if errors.Is(err, segment.ErrFull) && active.Size() > 0 {
		// The segment knows limits the roll check does not ask about.
		if err := p.rollMuLocked(base); err != nil {
			return appendResult{}, err
		}
		err = p.mu.active.seg.AppendHeader(batch, h)
	}
	if errors.Is(err, segment.ErrSync) {
		// The segment's new index files may not be durable, as a failed
		// roll's: the same failure closes the partition.
		return appendResult{}, p.failMuLocked(fmt.Errorf("appending: %w", err))
	}
	if err != nil {
		return appendResult{}, fmt.Errorf("partition: append to %s: %w", p.name, err)
	}
	if h.ProducerID != noProducer {
		// Before the end moves: a reader that sees the batch must see the
		// transaction it opens (the last stable offset stays below it) and
		// the .txnindex entry of the transaction an ABORT ends.
		op.decided = cond.decided
		if err := p.applyProducerMuLocked(op, *h); err != nil {
			return appendResult{}, p.failMuLocked(err)
		}
	}
	p.end.Store(last + 1)
	if p.cfg.Sync.Mode == SyncModeEvery && !p.mu.ticking {
		p.tickMuLocked()
	}
	p.mu.appended.appends++
	p.mu.appended.records += int64(h.LastOffsetDelta) + 1
	p.mu.appended.bytes += int64(len(batch))
	if p.mu.keys != nil {
		p.addRecordsMuLocked(p.mu.keys, base, records, batch, *h)
	}
	return appendResult{base: base}, nil
}

// shouldRoll applies Kafka's roll rules (LogSegment.shouldRoll,
// storage/src/main/java/org/apache/kafka/storage/internals/log/LogSegment.java)
// to an incoming batch, and rolls a segment that a failed roll left sealed.
func (p *Partition) shouldRoll(s *segment.Segment, size int, maxTS, last int64) bool {
	if s.Size() == 0 {
		return false
	}
	first := s.FirstBatchTimestamp()
	return s.Sealed() ||
		s.Size() > p.cfg.SegmentBytes-int64(size) ||
		(first >= 0 && maxTS-first > p.cfg.SegmentAge.Milliseconds()) ||
		s.IndexFull() ||
		!s.CanAppendOffset(last)
}

// rollMuLocked seals the active segment and creates the next one at base
// (the creation fsyncs the directory). The caller holds mu. The sealed
// segment is fsynced soon after by a goroutine the roll starts (or by the
// next Sync), outside mu, and the recovery point checkpoint then moves past it:
// recovery after a crash starts there.
//
// A roll that fails for want of space (ENOSPC) without a failed fsync leaves
// the partition usable: the old segment stays active (sealed if that step
// worked; Seal is idempotent, and the files of the new one are removed), so
// the next append rolls again, and the error matches syscall.ENOSPC. Any
// other failure closes the partition to appends.
func (p *Partition) rollMuLocked(base int64) error {
	old := p.mu.active
	err := old.seg.Seal()
	if err == nil && p.cfg.Sync.Mode != SyncModeNever && p.mu.markerEnd > max(p.synced.Load(), old.seg.Base()) {
		// A transaction marker must not be lost while what follows it
		// stays: recovery keeps the segments after one that lost its
		// unsynced tail whole (see Open), and the producer's next
		// transaction would then read as the one the lost marker ended.
		// Nothing is written to the next segment before the marker is
		// durable. Markers are few, and rolls rare.
		if err = old.seg.SyncLog(); err == nil {
			err = old.seg.SyncTxnIndex()
		}
		p.countFsync()
		if err != nil {
			return p.failMuLocked(fmt.Errorf("fsync of a segment holding a transaction marker failed: %w", err))
		}
	}
	var next *segment.Segment
	if err == nil {
		next, err = segment.Create(p.fsys, p.dir, base, p.cfg.segmentConfig())
	}
	if err != nil {
		err = fmt.Errorf("rolling to a new segment at %d: %w", base, err)
		if errors.Is(err, syscall.ENOSPC) && !errors.Is(err, segment.ErrSync) {
			return fmt.Errorf("partition: %s: %w", p.name, err)
		}
		return p.failMuLocked(err)
	}
	ref := newRef(next)
	st := p.state.Load()
	segs := make([]*segRef, len(st.segs), len(st.segs)+1)
	copy(segs, st.segs)
	p.state.Store(&state{segs: append(segs, ref)})
	p.mu.active = ref
	if old.acquire() {
		p.mu.pending = append(p.mu.pending, old)
	}
	p.takeSnapshotMuLocked()
	p.flushRolledMuLocked()
	p.stats.rolls.Add(1)
	return nil
}
