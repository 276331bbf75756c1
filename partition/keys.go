package partition

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/stratalog/strata/log"
)

// NoOffset, as AppendIfLast's expected last offset, means that the key has
// no record in the partition (EventStoreDB's "no stream"). As the actual
// last offset of a *WrongOffsetError it means the key had none.
const NoOffset int64 = -1

// keyIndex maps each key of a partition to the offset of its last record,
// for AppendIfLast. It is built on the first AppendIfLast after Open, by
// reading the partition, and kept up to date by every append from then on.
// It lives in memory only.
//
// An entry is the offset shifted left by one, with the low bit set when
// that record is a tombstone (a nil value): compaction removes tombstones
// once they are old enough, and then the key has no record left, which a
// lookup checks by reading the record. Compaction never removes the last
// record of a key otherwise. Retention and DeleteRecords remove records
// below the start offset: an entry below it means the key has no record
// left. Truncate drops the index; the next AppendIfLast builds it again.
//
// The map holds each key once, with the position of its entry in a slice,
// so that updating the entry of a known key allocates nothing.
type keyIndex struct {
	slot    map[string]int
	entries []int64 // noEntry: the key has no record
	// building is set while the partition is read to build the index: the
	// entries are then only those of the appends made since, which the
	// build lays over what it read.
	building bool
}

// noEntry is the entry of a key whose records are all gone.
const noEntry = -1

func newKeyIndex(building bool) *keyIndex {
	return &keyIndex{slot: map[string]int{}, building: building}
}

// set makes e the entry of key k.
func (ki *keyIndex) set(k []byte, e int64) {
	if i, ok := ki.slot[string(k)]; ok {
		ki.entries[i] = e
		return
	}
	ki.slot[string(k)] = len(ki.entries)
	ki.entries = append(ki.entries, e)
}

// get returns the entry of key k, and false if it has none.
func (ki *keyIndex) get(k []byte) (int64, bool) {
	i, ok := ki.slot[string(k)]
	if !ok || ki.entries[i] == noEntry {
		return 0, false
	}
	return ki.entries[i], true
}

// forget records that key k has no record left.
func (ki *keyIndex) forget(k []byte) {
	if i, ok := ki.slot[string(k)]; ok {
		ki.entries[i] = noEntry
	}
}

// overlay sets the entries of over in ki.
func (ki *keyIndex) overlay(over *keyIndex) {
	for k, i := range over.slot {
		if j, ok := ki.slot[k]; ok {
			ki.entries[j] = over.entries[i]
			continue
		}
		ki.slot[k] = len(ki.entries)
		ki.entries = append(ki.entries, over.entries[i])
	}
}

func keyEntry(off int64, tombstone bool) int64 {
	e := off << 1
	if tombstone {
		e |= 1
	}
	return e
}

// addRecordsMuLocked enters the keys of a batch appended at base: records,
// if the caller has them (Append's, at dense offsets), or else the batch's
// own. The caller holds mu.
func (p *Partition) addRecordsMuLocked(ki *keyIndex, base int64, records []log.Record, batch []byte, h log.BatchHeader) {
	if records != nil {
		for i := range records {
			if k := records[i].Key; k != nil {
				ki.set(k, keyEntry(base+int64(i), records[i].Value == nil))
			}
		}
		return
	}
	d := decoders.Get().(*log.Decoder)
	defer func() {
		d.Idle(pooledDecoderBytes)
		decoders.Put(d)
	}()
	d.Limit = p.cfg.maxDecompress()
	h.BaseOffset = base
	it, err := d.Iter(batch, h)
	if err != nil {
		// Checked before it was written: cannot fail. Should it, the
		// index no longer knows every key, and is dropped.
		p.mu.keys = nil
		return
	}
	var r log.Record
	for it.Next(&r) {
		if r.Key != nil {
			ki.set(r.Key, keyEntry(r.Offset, r.Value == nil))
		}
	}
}

// lastOffsetMuLocked returns the offset of the last record with key in the
// partition, or NoOffset. The caller holds mu, and the index is built.
func (p *Partition) lastOffsetMuLocked(key []byte) (int64, error) {
	ki := p.mu.keys
	e, ok := ki.get(key)
	if !ok {
		return NoOffset, nil
	}
	off := e >> 1
	if off < p.start.Load() {
		ki.forget(key)
		return NoOffset, nil
	}
	if e&1 == 0 || off >= p.HighWatermark() {
		return off, nil
	}
	// A tombstone that compaction may have removed.
	var r log.Record
	_, err := p.ReadRecord(off, &r, nil)
	switch {
	case err == nil:
		return off, nil
	case errors.Is(err, ErrNoRecord) || errors.Is(err, ErrOutOfRange):
		ki.forget(key)
		return NoOffset, nil
	}
	return 0, err
}

// buildKeys makes sure the key index is built: it reads the partition
// from its start to the end offset it had when the build began, outside mu
// (appends go on, and enter their keys into the index meanwhile), then lays
// those appends' entries over what it read. keysMu makes builds one at a
// time.
func (p *Partition) buildKeys() error {
	p.keysMu.Lock()
	defer p.keysMu.Unlock()
	for {
		p.mu.Lock()
		if err := p.writableMuLocked(); err != nil {
			p.mu.Unlock()
			return fmt.Errorf("partition: append to %s: %w", p.name, err)
		}
		if p.mu.keys != nil && !p.mu.keys.building {
			p.mu.Unlock()
			return nil
		}
		overlay := newKeyIndex(true)
		p.mu.keys = overlay
		end := p.end.Load()
		p.mu.Unlock()

		base, err := p.readKeys(end)
		if err != nil {
			p.mu.Lock()
			if p.mu.keys == overlay {
				p.mu.keys = nil
			}
			p.mu.Unlock()
			if errors.Is(err, ErrOutOfRange) {
				continue // retention moved the start offset past the reader
			}
			return err
		}
		p.mu.Lock()
		if p.mu.keys != overlay {
			// A truncation dropped the index meanwhile: read again.
			p.mu.Unlock()
			continue
		}
		base.overlay(overlay)
		p.mu.keys = base
		p.mu.Unlock()
		return nil
	}
}

// readKeys reads the keys of the records below end into a new index. Under
// SyncAlways, the records below end that an fsync in flight will make
// visible are fsynced first.
func (p *Partition) readKeys(end int64) (*keyIndex, error) {
	if p.HighWatermark() < end {
		if err := p.syncTo(end); err != nil {
			return nil, err
		}
	}
	ki := newKeyIndex(false)
	r := p.NewReader(p.StartOffset())
	defer r.Close()
	var rec log.Record
	for {
		ok, err := r.Next(&rec)
		if err != nil {
			return nil, err
		}
		if !ok || rec.Offset >= end {
			return ki, nil
		}
		if rec.Key != nil {
			ki.set(rec.Key, keyEntry(rec.Offset, rec.Value == nil))
		}
		if p.keysBuildHook != nil && len(ki.entries) == 1 {
			p.keysBuildHook()
		}
	}
}

// AppendIfLast appends records as one batch, as Append does, only if the
// last record with key in the partition is still at offset last, or, with
// last NoOffset, if the partition holds no record with key; it returns the
// offset of the first record appended. Every record must have key as its
// Key (ErrWrongKey otherwise). Otherwise it writes nothing and returns a
// *WrongOffsetError (matching ErrWrongOffset) with the key and the actual
// last offset (NoOffset if none). The check and the append are one step
// under the lock that assigns offsets: of concurrent AppendIfLast calls
// with the same key and last, exactly one succeeds.
//
// While the key's last record lies at or past the first offset of a
// transaction still open in the partition (one of its records, or a
// record appended after its first), AppendIfLast writes nothing and
// returns ErrPendingTransaction, whatever last is: retry once the
// transaction ends. A record of an aborted transaction can be the key's
// last: it is the Actual offset of a mismatch, though read_committed
// readers never see it, and an append expecting it is taken.
//
// A key's last record is the last one retained: once retention or
// DeleteRecords removed every record of a key, or compaction removed its
// last record, a tombstone, the key has no record (NoOffset), as a
// partition read from its start would tell.
//
// The partition keeps the key of every record and the offset of its last
// one in memory, once AppendIfLast is first called after Open: that call
// reads the whole partition to build the map (appends go on meanwhile),
// and from then on every append enters its keys, so a check costs a map
// lookup whatever the partition's size. Truncate drops the map; the next
// AppendIfLast reads the partition again.
//
// Bad input is refused first: a nil key is ErrNoKey, a last below
// NoOffset ErrOutOfRange, and the rest is as for Append. A closed
// partition is ErrClosed.
func (p *Partition) AppendIfLast(records []log.Record, key []byte, last int64) (int64, error) {
	if key == nil {
		return 0, fmt.Errorf("partition: append to %s: %w", p.name, ErrNoKey)
	}
	if last < NoOffset {
		return 0, fmt.Errorf("partition: append to %s: expected last offset %d is below -1 (no record): %w", p.name, last, ErrOutOfRange)
	}
	for i := range records {
		if !bytes.Equal(records[i].Key, key) {
			return 0, fmt.Errorf("partition: record %d to %s has key %q, not %q: %w", i, p.name, records[i].Key, key, ErrWrongKey)
		}
	}
	return p.appendRecords(records, p.cfg.Compression, p.cfg.CompressionLevel, condition{end: anyEnd, key: key, last: last})
}

// errKeysDropped means a truncation dropped the key index between its
// build and the append that needed it: build it again.
var errKeysDropped = errors.New("partition: key index dropped")
