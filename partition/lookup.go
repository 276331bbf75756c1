package partition

import (
	"fmt"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// ReadRecord reads the record at offset into rec, with its key, value and
// header values copied into buf from its start (buf[:0]), and returns buf,
// grown if its capacity was short. rec aliases the returned buf, not the
// segment's memory mapping: it stays valid after the call, until buf is
// written again. rec.Headers reuses the backing array of rec.Headers, and
// header keys are new strings; a record without headers costs no
// allocation when buf is large enough.
//
// A lookup costs what a Reader's SetOffset and Next cost (the segment's
// offset index, a scan of batch headers, the batch's CRC the first time the
// process reads it, the earlier records of the batch stepped over by their
// length prefixes), plus a reference taken on the segment and released, and
// the copy. A record of a compressed batch costs decompressing the batch.
// It never takes the appenders' lock.
//
// Errors: an offset below StartOffset or at or past HighWatermark is
// ErrOutOfRange, with the range [StartOffset, HighWatermark) in the
// message; an offset in that range that holds no record (compaction removed
// it, or a transaction marker takes it) is ErrNoRecord; damage matches
// log.ErrCorrupt, with the file and position; a closed partition is
// ErrClosed. rec is unspecified after an error.
func (p *Partition) ReadRecord(offset int64, rec *log.Record, buf []byte) ([]byte, error) {
	return p.ReadRecordInto(offset, rec, buf, nil)
}

// ReadRecordInto is ReadRecord that also leaves the header of the batch
// holding the record in *h, for a caller that decides by its batch (a
// read_committed lookup asks InAbortedTxn) without reading the batch
// again; a nil h asks for no header, and none is copied. *h is unspecified
// after an error.
func (p *Partition) ReadRecordInto(offset int64, rec *log.Record, buf []byte, h *log.BatchHeader) ([]byte, error) {
	buf = buf[:0]
	if err := p.checkOpen(); err != nil {
		return buf, err
	}
	if _, start, hw := p.readable(); offset < start || offset >= hw {
		return buf, fmt.Errorf("partition: offset %d of %s out of range [%d, %d): %w", offset, p.name, start, hw, ErrOutOfRange)
	}
	if h == nil {
		h = new(log.BatchHeader) // on the stack: nothing keeps it
	}
	var (
		held *segRef
		rerr error // reading the record from the batch kept
	)
	found, err := p.fromSegment(offset, func(st *state, i int, r *segRef, hw int64) (bool, error) {
		var c segment.Cursor
		ok, err := cursorAt(st, i, r, offset, &c)
		if !ok {
			return false, err
		}
		c.SetLimit(hw)
		b, err := c.NextInto(h)
		if err != nil || b == nil {
			return false, err
		}
		held = r
		buf, rerr = p.recordIn(h, b, &c, offset, rec, buf)
		return true, nil
	})
	if err != nil {
		return buf, err
	}
	if !found {
		// In range when checked, yet no batch reaches it: a gap at the
		// end of what readers see, or the start offset moved past it
		// meanwhile (fromSegment reports that as out of range).
		return buf, p.noRecord(offset)
	}
	_ = held.release()
	return buf, rerr
}

// recordIn reads the record at offset from batch, whose header is h and
// which cur returned last, into rec, copying its bytes into buf.
func (p *Partition) recordIn(h *log.BatchHeader, batch []byte, cur *segment.Cursor, offset int64, rec *log.Record, buf []byte) ([]byte, error) {
	if h.BaseOffset > offset || h.IsControl() {
		return buf, p.noRecord(offset)
	}
	if h.Compression() == log.None {
		var dec log.Decoder // reads in place: no buffer
		return p.decodeAt(h, batch, cur, offset, rec, buf, &dec)
	}
	dec := decoders.Get().(*log.Decoder)
	dec.Limit = p.cfg.maxDecompress()
	buf, err := p.decodeAt(h, batch, cur, offset, rec, buf, dec)
	dec.Idle(pooledDecoderBytes)
	decoders.Put(dec)
	return buf, err
}

// decodeAt is recordIn once it has a Decoder for the batch.
func (p *Partition) decodeAt(h *log.BatchHeader, batch []byte, cur *segment.Cursor, offset int64, rec *log.Record, buf []byte, dec *log.Decoder) ([]byte, error) {
	plain, pos, read, prev, err := seekRecord(h, batch, offset, cur, dec)
	if err != nil {
		return buf, fmt.Errorf("partition: reading %s at %d: %w", p.name, offset, err)
	}
	ok, err := log.ReadRecordAt(plain, h, pos, read, prev, rec)
	if err != nil {
		return buf, fmt.Errorf("partition: reading %s at %d: %w", p.name, offset, err)
	}
	if !ok {
		return buf, p.noRecord(offset) // the batch's last records are gone
	}
	if rec.Offset != offset {
		return buf, p.noRecord(offset)
	}
	return copyRecord(rec, buf), nil
}

func (p *Partition) noRecord(offset int64) error {
	return fmt.Errorf("partition: offset %d of %s holds no record (compaction removed it, or a transaction marker takes it): %w", offset, p.name, ErrNoRecord)
}

// copyRecord copies the key, value and header values of rec into buf[:0],
// growing it to fit, points rec at the copies and returns buf. A nil field
// stays nil and an empty one stays empty and non-nil.
func copyRecord(rec *log.Record, buf []byte) []byte {
	n := len(rec.Key) + len(rec.Value)
	for _, h := range rec.Headers {
		n += len(h.Value)
	}
	if buf == nil || cap(buf) < n {
		buf = make([]byte, 0, n)
	}
	buf = buf[:0]
	rec.Key, buf = appendField(buf, rec.Key)
	rec.Value, buf = appendField(buf, rec.Value)
	for i := range rec.Headers {
		rec.Headers[i].Value, buf = appendField(buf, rec.Headers[i].Value)
	}
	return buf
}

// appendField appends b to buf, which has room for it, and returns the
// copy (nil for a nil b), its capacity clipped, and buf.
func appendField(buf, b []byte) (field, out []byte) {
	if b == nil {
		return nil, buf
	}
	i := len(buf)
	buf = append(buf, b...)
	return buf[i:len(buf):len(buf)], buf
}
