package compaction

import (
	"errors"
	"fmt"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// flushBytes is how many bytes of cleaned batches Clean gathers before it
// appends them to the output segment with one write.
const flushBytes = 1 << 20

// Round is what the Clean calls of one cleaning round share.
type Round struct {
	// Config supplies DeleteRetention (its defaults apply).
	Config Config
	// Map holds the latest offset of every key of the dirty section, as
	// BuildMap left it.
	Map *OffsetMap
	// End is what BuildMap returned: the map covers [firstDirty, End).
	// Records at or past End are copied as they are, and the batch that
	// ends just before End is kept even when emptied ("so that the last
	// offset is not lost").
	End int64
	// Now is the round's clock: tombstones are dropped from batches whose
	// delete horizon is at or before Now, and batches whose tombstones are
	// copied for the first time get the horizon Now + DeleteRetention.
	Now time.Time
	// ProducerLastOffsets maps the ID of each producer whose state the
	// partition keeps to the last offset it wrote. A batch ending at its
	// producer's last offset is kept even when emptied, so that the
	// producer's epoch and sequence survive (Kafka's RETAIN_EMPTY for
	// active producers). Nil when the partition keeps no producer state.
	ProducerLastOffsets map[int64]int64
	// Aborted lists the partition's aborted transactions (its .txnindex
	// entries, as Partition.AbortedTxns returns them), those whose ABORT
	// markers lie past the cleaned segments included; the .txnindex
	// entries of the cleaned segments are added to it. Their batches are
	// dropped, and their markers kept while needed (see Clean).
	Aborted []segment.AbortedTxn
}

// CreateFunc makes an empty writable segment with base offset base, for
// Clean to write into: in .cleaned files, with segment.Config.AllowGaps set
// (cleaned segments have gaps) and a MaxBytes large enough for most groups
// (Clean starts another segment when one fills up).
type CreateFunc func(base int64) (*segment.Segment, error)

// Stats count what a Clean call read and wrote. Records read = records
// written + Superseded + Keyless + TombstonesExpired + Aborted +
// MarkersRemoved.
type Stats struct {
	BatchesRead, BatchesWritten int   // batches, empty ones included
	RecordsRead, RecordsWritten int64 // records
	BytesRead, BytesWritten     int64 // batch bytes
	// Superseded counts records dropped because their key has a later
	// record; Keyless those dropped for having no key; TombstonesExpired
	// the latest tombstones of their keys dropped after their horizon.
	Superseded, Keyless, TombstonesExpired int64
	// Aborted counts the records dropped for belonging to an aborted
	// transaction; MarkersRemoved the transaction markers dropped once no
	// record needed them and their delete horizon had passed.
	Aborted, MarkersRemoved int64
	// Copied counts batches copied byte for byte; Rebuilt those rewritten
	// with fewer records or a new delete horizon; Emptied those kept as an
	// empty batch; Horizons those stamped with a delete horizon.
	Copied, Rebuilt, Emptied, Horizons int
	// Segments counts the segments written.
	Segments int
}

// Add adds the counts of o to s, to total the groups of a round.
func (s *Stats) Add(o Stats) {
	s.BatchesRead += o.BatchesRead
	s.BatchesWritten += o.BatchesWritten
	s.RecordsRead += o.RecordsRead
	s.RecordsWritten += o.RecordsWritten
	s.BytesRead += o.BytesRead
	s.BytesWritten += o.BytesWritten
	s.Superseded += o.Superseded
	s.Keyless += o.Keyless
	s.TombstonesExpired += o.TombstonesExpired
	s.Aborted += o.Aborted
	s.MarkersRemoved += o.MarkersRemoved
	s.Copied += o.Copied
	s.Rebuilt += o.Rebuilt
	s.Emptied += o.Emptied
	s.Horizons += o.Horizons
	s.Segments += o.Segments
}

// Clean copies what survives of src, a group of consecutive segments (see
// Group), into new segments made by create: usually one, based at
// src[0].Base() so that it takes the group's place, and more only if it
// fills up (each based at its first batch). It returns them sealed and
// synced, ready for the swap; the caller owns them. It does not change src.
//
// A record survives iff
//
//	offset ≥ r.End                                  (beyond the map)
//	or it has a key, offset ≥ r.Map[key]            (the key's latest)
//	   and (it has a value or its batch's delete horizon is after r.Now)
//
// so key-less records below End go, and a tombstone lives until a cleaning
// after its horizon.
//
// Transactions are followed as Kafka's cleaner follows them: the batches
// of an aborted transaction (r.Aborted, and the .txnindex entries of src)
// go whole, wherever they are; the batches of other transactions are
// data, cleaned by the rules above. Control batches (transaction markers)
// are never deduplicated by key: a marker stays while this cleaning met
// records of its transaction (for an ABORT, its .txnindex entry goes into
// the cleaned segment with it), and otherwise is stamped with a delete
// horizon, r.Now + DeleteRetention, as a tombstone is, and dropped by a
// cleaning after it.
//
// Batches keep their boundaries: a batch whose records all survive, and
// that needs no new horizon, is copied byte for byte; otherwise it is
// rebuilt with the surviving records and the original base offset, last
// offset delta, leader epoch, producer ID, epoch and base sequence, and
// timestamp type, as Kafka's MemoryRecords.filterTo rebuilds a batch. A
// rebuilt batch that holds a tombstone and had no delete horizon gets one: attribute bit 6 and base timestamp
// r.Now + DeleteRetention, record timestamps unchanged (KIP-534). Its max
// timestamp is that of the surviving records (CreateTime) or the original
// (LogAppendTime). A batch left with no record is dropped, unless it ends
// just before r.End or at its producer's last offset (r.ProducerLastOffsets):
// then it stays as an empty 61-byte batch (base timestamp -1, max timestamp
// kept) so that its offsets are not lost.
//
// On error Clean deletes the segments it made and returns none.
func Clean(src []*segment.Segment, create CreateFunc, r Round) (out []*segment.Segment, st Stats, err error) {
	if err := checkSources(src); err != nil {
		return nil, Stats{}, err
	}
	if r.Map == nil || create == nil {
		return nil, Stats{}, fmt.Errorf("compaction: no offset map or create function: %w", ErrInvalid)
	}
	cfg := r.Config.withDefaults()
	c := &cleaner{
		r:       r,
		txns:    newTxnState(withSegmentTxns(r.Aborted, src)),
		nowMs:   r.Now.UnixMilli(),
		horizon: r.Now.Add(cfg.DeleteRetention).UnixMilli(),
		create:  create,
		dec:     log.Decoder{Limit: cfg.DecompressLimit},
	}
	defer func() {
		if err != nil {
			for _, s := range c.out {
				_ = s.Delete() // best effort: they were never swapped in
			}
			out, st = nil, Stats{}
		}
	}()
	if err := c.next(src[0].Base()); err != nil {
		return nil, Stats{}, err
	}
	for _, s := range src {
		if err := c.segment(s); err != nil {
			return nil, Stats{}, err
		}
	}
	if err := c.flush(); err != nil {
		return nil, Stats{}, err
	}
	if err := c.finish(); err != nil {
		return nil, Stats{}, err
	}
	return c.out, c.st, nil
}

// checkSources checks that src is a non-empty run of segments in offset
// order.
func checkSources(src []*segment.Segment) error {
	if len(src) == 0 {
		return fmt.Errorf("compaction: no segment to clean: %w", ErrInvalid)
	}
	for i := 1; i < len(src); i++ {
		if src[i].Base() < src[i-1].NextOffset() || src[i].Base() <= src[i-1].Base() {
			return fmt.Errorf("compaction: segment %d (base %d) does not follow segment %d (base %d, next offset %d): %w",
				i, src[i].Base(), i-1, src[i-1].Base(), src[i-1].NextOffset(), ErrInvalid)
		}
	}
	return nil
}

// cleaner is the state of one Clean call.
type cleaner struct {
	r              Round
	nowMs, horizon int64
	create         CreateFunc
	out            []*segment.Segment
	st             Stats
	buf            []byte       // cleaned batches not yet appended
	recs           []log.Record // the surviving records of one batch
	dec            log.Decoder  // decompresses the batch being cleaned
	txns           *txnState
	entries        []segment.AbortedTxn // .txnindex entries of markers in buf
}

// segment cleans every batch of s.
func (c *cleaner) segment(s *segment.Segment) error {
	if s.Size() == 0 {
		return nil
	}
	cur, err := s.CursorAt(s.Base())
	if err != nil {
		return fmt.Errorf("compaction: reading %s: %w", s.Path(), err)
	}
	for {
		h, b, err := cur.Next()
		if err != nil {
			return fmt.Errorf("compaction: reading %s: %w", s.Path(), err)
		}
		if b == nil {
			return nil
		}
		if err := c.batch(h, b); err != nil {
			return fmt.Errorf("compaction: cleaning %s at offset %d: %w", s.Path(), h.BaseOffset, err)
		}
	}
}

// batch cleans one batch into c.buf.
func (c *cleaner) batch(h log.BatchHeader, b []byte) error {
	c.st.BatchesRead++
	c.st.BytesRead += int64(len(b))
	if h.IsControl() {
		return c.marker(h, b)
	}
	if c.txns.onBatch(h) {
		c.st.RecordsRead += int64(h.NumRecords)
		c.st.Aborted += int64(h.NumRecords)
		if c.keepEmpty(h) {
			return c.empty(h)
		}
		return nil
	}
	it, err := c.dec.Iter(b, h)
	if unreadable(err) {
		return c.copy(b) // kept as it is, never mapped
	}
	if err != nil {
		return err
	}
	n, dropped, tombstone := 0, false, false
	maxTS := int64(-1)
	for {
		if n == len(c.recs) {
			c.recs = append(c.recs, log.Record{})
		}
		rec := &c.recs[n]
		if !it.Next(rec) {
			break
		}
		c.st.RecordsRead++
		if !c.keep(h, rec) {
			dropped = true
			continue
		}
		ts := it.StoredTimestamp()
		rec.Timestamp = time.UnixMilli(ts)
		maxTS = max(maxTS, ts)
		tombstone = tombstone || rec.Value == nil
		n++
	}
	if err := it.Err(); err != nil {
		return err
	}
	c.st.RecordsWritten += int64(n)
	stamp := tombstone && !h.HasDeleteHorizon()
	switch {
	case n > 0 && !dropped && !stamp:
		return c.copy(b)
	case n > 0:
		nh := h
		switch {
		case stamp:
			nh.Attributes |= log.AttrDeleteHorizon
			nh.BaseTimestamp = c.horizon
			c.st.Horizons++
		case !h.HasDeleteHorizon():
			nh.BaseTimestamp = c.recs[0].Timestamp.UnixMilli()
		}
		if h.TimestampType() == log.CreateTime {
			nh.MaxTimestamp = maxTS
		}
		c.st.Rebuilt++
		return c.append(nh, c.recs[:n])
	case c.keepEmpty(h):
		return c.empty(h)
	}
	return nil
}

// empty adds the batch of header h with no record, to keep its offsets.
func (c *cleaner) empty(h log.BatchHeader) error {
	nh := h
	nh.Attributes &^= log.AttrDeleteHorizon
	nh.BaseTimestamp = -1
	c.st.Emptied++
	return c.append(nh, nil)
}

// marker cleans the control batch b: kept while its transaction needs it,
// then stamped with a delete horizon, then dropped (see Clean).
func (c *cleaner) marker(h log.BatchHeader, b []byte) error {
	c.st.RecordsRead += int64(h.NumRecords)
	typ, empty, ok := markerType(&c.dec, b, h)
	discard, entry := false, (*segment.AbortedTxn)(nil)
	if ok {
		discard, entry = c.txns.onMarker(h, typ, empty)
	}
	switch {
	case !discard:
		if entry != nil {
			c.entries = append(c.entries, *entry)
		}
		c.st.RecordsWritten += int64(h.NumRecords)
		return c.copy(b)
	case empty && c.keepEmpty(h):
		return c.copy(b)
	case empty:
		return nil
	case h.HasDeleteHorizon() && c.nowMs >= h.BaseTimestamp:
		c.st.MarkersRemoved += int64(h.NumRecords)
		if c.keepEmpty(h) {
			return c.empty(h) // the batch keeps its producer's epoch
		}
		return nil
	case h.HasDeleteHorizon():
		c.st.RecordsWritten += int64(h.NumRecords)
		return c.copy(b)
	}
	// Not needed any more: kept until a horizon, which it gets now.
	it, err := c.dec.Iter(b, h)
	if err != nil {
		return err
	}
	n := 0
	for ; ; n++ {
		if n == len(c.recs) {
			c.recs = append(c.recs, log.Record{})
		}
		if !it.Next(&c.recs[n]) {
			break
		}
		c.recs[n].Timestamp = time.UnixMilli(it.StoredTimestamp())
	}
	if err := it.Err(); err != nil {
		return err
	}
	nh := h
	nh.Attributes |= log.AttrDeleteHorizon
	nh.BaseTimestamp = c.horizon
	c.st.Horizons++
	c.st.Rebuilt++
	c.st.RecordsWritten += int64(n)
	return c.append(nh, c.recs[:n])
}

// keep reports whether rec, of the batch with header h, survives, and
// counts it if not.
func (c *cleaner) keep(h log.BatchHeader, rec *log.Record) bool {
	switch {
	case rec.Offset >= c.r.End:
		return true
	case rec.Key == nil:
		c.st.Keyless++
		return false
	}
	if latest, ok := c.r.Map.Get(rec.Key); ok && rec.Offset < latest {
		c.st.Superseded++
		return false
	}
	if rec.Value == nil && h.HasDeleteHorizon() && c.nowMs >= h.BaseTimestamp {
		c.st.TombstonesExpired++
		return false
	}
	return true
}

// keepEmpty reports whether a batch left with no record stays as an empty
// batch.
func (c *cleaner) keepEmpty(h log.BatchHeader) bool {
	if h.NextOffset() == c.r.End {
		return true
	}
	last, ok := c.r.ProducerLastOffsets[h.ProducerID]
	return ok && h.ProducerID >= 0 && last == h.LastOffset()
}

// copy adds batch b, unchanged.
func (c *cleaner) copy(b []byte) error {
	c.st.Copied++
	c.st.BatchesWritten++
	c.st.BytesWritten += int64(len(b))
	c.buf = append(c.buf, b...)
	return c.maybeFlush()
}

// append adds a batch rebuilt from h and recs.
func (c *cleaner) append(h log.BatchHeader, recs []log.Record) error {
	n := len(c.buf)
	buf, err := log.EncodeBatchWithHeader(c.buf, h, recs)
	if err != nil {
		return err
	}
	c.buf = buf
	c.st.BatchesWritten++
	c.st.BytesWritten += int64(len(buf) - n)
	return c.maybeFlush()
}

func (c *cleaner) maybeFlush() error {
	if len(c.buf) < flushBytes {
		return nil
	}
	return c.flush()
}

// flush appends the gathered batches to the current output segment, and
// starts a new one at the first batch that does not fit.
func (c *cleaner) flush() error {
	err := c.flushBatches()
	c.buf = c.buf[:0]
	if err != nil {
		return err
	}
	// The markers of the entries are in the output now.
	for _, e := range c.entries {
		i := len(c.out) - 1
		for i > 0 && c.out[i].Base() > e.LastOffset {
			i--
		}
		if err := c.out[i].AppendAbortedTxn(e); err != nil {
			return err
		}
	}
	c.entries = c.entries[:0]
	return nil
}

// flushBatches is flush's append of the gathered batches.
func (c *cleaner) flushBatches() error {
	if len(c.buf) == 0 {
		return nil
	}
	dst := c.out[len(c.out)-1]
	err := dst.Append(c.buf)
	if !errors.Is(err, segment.ErrFull) {
		return err
	}
	// Batch by batch, to find the first that does not fit.
	it := log.NewBatchIter(c.buf)
	for it.Next() {
		h, b := it.Header(), it.Batch()
		err = dst.AppendHeader(b, &h)
		if errors.Is(err, segment.ErrFull) && dst.Size() > 0 {
			if err = c.next(h.BaseOffset); err == nil {
				dst = c.out[len(c.out)-1]
				err = dst.AppendHeader(b, &h)
			}
		}
		if err != nil {
			return err
		}
	}
	return it.Err()
}

// next seals the current output segment, if any, and starts a new one at
// base.
func (c *cleaner) next(base int64) error {
	if err := c.finish(); err != nil {
		return err
	}
	s, err := c.create(base)
	if err != nil {
		return fmt.Errorf("compaction: creating the segment at %d: %w", base, err)
	}
	c.out = append(c.out, s)
	c.st.Segments++
	return nil
}

// finish seals and syncs the current output segment, if any.
func (c *cleaner) finish() error {
	if len(c.out) == 0 {
		return nil
	}
	s := c.out[len(c.out)-1]
	if s.Sealed() {
		return nil
	}
	if err := s.Seal(); err != nil {
		return err
	}
	return s.Sync()
}
