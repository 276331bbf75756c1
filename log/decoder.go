package log

import (
	"bytes"
	"encoding/binary"
)

// DefaultDecompressLimit is the most the records of one batch may
// decompress to in a Decoder whose Limit is zero: far more than any batch
// Kafka's default max.message.bytes (1 MiB) lets a producer send holds in
// practice, and a bound on what a hostile batch can make a reader allocate.
const DefaultDecompressLimit = 64 << 20

// Decoder reads the records of batches of every codec: uncompressed ones
// in place, compressed ones decompressed, once per batch, into a buffer the
// Decoder keeps and reuses, so that a stream of batches allocates nothing
// once the buffer has grown to the largest of them. Records read through a
// Decoder from a compressed batch alias that buffer: they are valid until
// the Decoder decompresses another batch. The zero Decoder is ready to use;
// a Decoder is for one goroutine at a time.
type Decoder struct {
	// Limit bounds what the records of one batch may decompress to, in
	// bytes: more is ErrTooLarge. Zero means DefaultDecompressLimit.
	Limit int

	buf []byte // the header and decompressed records of the batch below
	src []byte // the compressed batch buf holds, to decompress it once
}

// Plain returns batch, whose header h the caller has read (ReadHeader,
// CheckBatch or a segment's cursor), laid out as an uncompressed batch: its
// 61 header bytes, as they are, followed by its records, uncompressed. An
// uncompressed batch is returned as it is; a compressed one is decompressed
// into the Decoder's buffer, unless it holds that batch already. A legacy
// message (magic 0 or 1) is ErrUnsupportedFormat, a codec this package does
// not know ErrUnsupportedCompression, a stream that does not decompress
// ErrCorrupt, and records over Limit ErrTooLarge.
func (d *Decoder) Plain(batch []byte, h BatchHeader) ([]byte, error) {
	return d.PlainOf(batch, &h)
}

// PlainOf is Plain reading the header in place, for a caller that holds
// it: a copy of a header whose fields were just stored one by one (as
// ReadHeaderInto stores them) waits for those stores, since a wide load
// cannot take its bytes from several narrow stores in flight.
func (d *Decoder) PlainOf(batch []byte, h *BatchHeader) ([]byte, error) {
	if plain, ok := PlainAsIs(batch, h); ok {
		return plain, nil
	}
	switch {
	case h.IsLegacy():
		return nil, checkReadable(*h)
	case h.Size() < BatchHeaderSize:
		return nil, errorf(ErrCorrupt, "batch length %d is shorter than a header", h.Length)
	case len(batch) < h.Size():
		return nil, errorf(ErrIncomplete, "batch needs %d bytes, have %d", h.Size(), len(batch))
	}
	batch = batch[:h.Size()]
	c := h.Compression() // not None: PlainAsIs took those
	if d.holds(batch) {
		return d.buf, nil
	}
	limit := d.Limit
	if limit <= 0 {
		limit = DefaultDecompressLimit
	}
	d.src = nil
	buf, err := decompress(append(d.buf[:0], batch[:BatchHeaderSize]...), c, batch[BatchHeaderSize:], limit)
	d.buf = buf
	if err != nil {
		return nil, err
	}
	d.src = batch
	return buf, nil
}

// PlainAsIs returns batch as its own plain form (what Plain returns for
// it) and true if it is an uncompressed batch of magic 2 wholly in batch,
// whose header h the caller has read; false otherwise, for Plain to say
// why or to decompress. It is small enough to inline into a lookup.
func PlainAsIs(batch []byte, h *BatchHeader) ([]byte, bool) {
	n := h.Size()
	if h.Compression() != None || h.IsLegacy() || n < BatchHeaderSize || len(batch) < n {
		return nil, false
	}
	return batch[:n], true
}

// holds reports whether the buffer holds batch decompressed: the same
// bytes (a mapping may be reused for another file) with the same header,
// CRC included.
func (d *Decoder) holds(batch []byte) bool {
	return d.src != nil && len(d.src) == len(batch) && &d.src[0] == &batch[0] &&
		bytes.Equal(d.buf[:BatchHeaderSize], batch[:BatchHeaderSize])
}

// Iter returns an iterator over the records of batch, whose header h the
// caller has read: in place if it is uncompressed, decompressed (see Plain)
// if not. The iterator checks the records as [NewRecordIter]'s does.
func (d *Decoder) Iter(batch []byte, h BatchHeader) (RecordIter, error) {
	plain, err := d.Plain(batch, h)
	if err != nil {
		return RecordIter{}, err
	}
	return plainIter(plain, h), nil
}

// IterAt is Iter for a caller that has stepped over the first read records
// of the batch's plain form (Plain) by their length prefixes: the iterator
// starts at byte pos of it, as [NewRecordIterAt] does for an uncompressed
// batch.
func (d *Decoder) IterAt(batch []byte, h BatchHeader, pos int, read int32, prev int64) (RecordIter, error) {
	it, err := d.Iter(batch, h)
	if err != nil {
		return RecordIter{}, err
	}
	return it.at(pos, read, prev)
}

// Validate checks the batch at the start of b as [Validate] does, a
// compressed one included: its CRC, then every record, decompressed.
func (d *Decoder) Validate(b []byte) (BatchHeader, error) {
	h, err := CheckBatch(b)
	if err != nil {
		return h, err
	}
	it, err := d.Iter(b, h)
	if err != nil {
		return h, err
	}
	for it.next(nil) {
	}
	return h, it.err
}

// Idle readies d to be kept unused (in a pool, say): it forgets the batch
// it decompressed last, which it would otherwise keep from being collected,
// and drops its buffer if that is larger than keep bytes.
func (d *Decoder) Idle(keep int) {
	d.src = nil
	if cap(d.buf) > keep {
		d.buf = nil
	}
}

// Recompress appends to dst the batch batch, whose header h the caller has
// read, with its records compressed with c at level (None: uncompressed),
// as a broker re-encodes a batch for a topic whose compression.type is not
// the batch's: every header field and every record byte stays as it was;
// only the records section's codec, the length and the CRC change. A batch
// that would not get smaller is written uncompressed. d decompresses it
// first if it is compressed.
func Recompress(dst []byte, d *Decoder, batch []byte, h BatchHeader, c Compression, level int) ([]byte, error) {
	if err := CheckLevel(c, level); err != nil {
		return dst, err
	}
	plain, err := d.Plain(batch, h)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, plain...)
	b := dst[start:]
	be := binary.BigEndian
	be.PutUint32(b[offLength:], uint32(len(b)-lengthOverhead))
	be.PutUint16(b[offAttributes:], be.Uint16(b[offAttributes:])&^AttrCompressionMask)
	return compressBatch(dst, start, c, level)
}
