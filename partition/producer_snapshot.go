package partition

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// snapshotSuffix ends the name of a producer state snapshot: the offset it
// was taken at (the log end offset then: it describes the records below
// it) as 20 digits, as Kafka names them.
const snapshotSuffix = ".snapshot"

// A producer state snapshot is Kafka's, format version 1
// (ProducerStateManager.writeSnapshot,
// storage/src/main/java/org/apache/kafka/storage/internals/log/ProducerStateManager.java),
// big-endian:
//
//	+---------+--------+-------+----------------------------+
//	| version | crc    | count | count entries of 46 bytes  |
//	| int16=1 | uint32 | int32 |                            |
//	+---------+--------+-------+----------------------------+
//	           CRC-32C of everything after the crc field
//
//	entry: producer_id int64, epoch int16, last_sequence int32,
//	       last_offset int64, offset_delta int32, timestamp int64,
//	       coordinator_epoch int32, current_txn_first_offset int64
//
// Kafka writes one entry per producer, for its last batch (last_offset −1
// if it has none: its last write was a marker). The partition writes one
// entry per batch it remembers, oldest first, so that a retry of any of the
// last 5 is still answered after a restart; Kafka reads such a file as it
// reads its own (the last entry of a producer id is the one it keeps), and
// the partition reads Kafka's.
const (
	snapshotVersion     = 1
	snapshotHeaderSize  = 2 + 4 + 4
	snapshotEntrySize   = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8
	snapshotEntriesFrom = 2 + 4 // the CRC covers from here
)

// ErrCorruptSnapshot means a producer state snapshot fails its checks: an
// unknown version, a CRC mismatch, a size that does not fit its entries.
// It also matches log.ErrCorrupt. Open never fails with it: the snapshot is
// logged, removed, and an earlier one (or the log) used instead.
var ErrCorruptSnapshot = log.Corruption("partition: corrupt producer snapshot")

// encodeSnapshot returns the snapshot of ps.
func encodeSnapshot(ps *producerState) []byte {
	ids := make([]int64, 0, len(ps.entries))
	n := 0
	for id, e := range ps.entries {
		ids = append(ids, id)
		n += max(1, e.n)
	}
	slices.Sort(ids)
	be := binary.BigEndian
	b := make([]byte, snapshotHeaderSize, snapshotHeaderSize+n*snapshotEntrySize)
	be.PutUint16(b, snapshotVersion)
	be.PutUint32(b[snapshotEntriesFrom:], uint32(n))
	for _, id := range ids {
		e := ps.entries[id]
		put := func(lastSeq int32, lastOffset int64, delta int32, ts int64) {
			b = be.AppendUint64(b, uint64(id))
			b = be.AppendUint16(b, uint16(e.epoch))
			b = be.AppendUint32(b, uint32(lastSeq))
			b = be.AppendUint64(b, uint64(lastOffset))
			b = be.AppendUint32(b, uint32(delta))
			b = be.AppendUint64(b, uint64(ts))
			b = be.AppendUint32(b, uint32(e.coordinatorEpoch))
			b = be.AppendUint64(b, uint64(e.txnFirst))
		}
		if e.n == 0 {
			put(noProducer, -1, 0, e.lastTimestamp)
			continue
		}
		for i := range e.n {
			bm := e.batch(i)
			ts := bm.timestamp
			if i == e.n-1 {
				ts = e.lastTimestamp
			}
			put(bm.lastSeq, bm.lastOffset, int32(bm.lastOffset-bm.firstOffset), ts)
		}
	}
	be.PutUint32(b[2:], crc32.Checksum(b[snapshotEntriesFrom:], castagnoli))
	return b
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// seqSub returns the sequence delta before seq, wrapping below 0 to
// MaxInt32 as Kafka's DefaultRecordBatch.decrementSequence does.
func seqSub(seq, delta int32) int32 {
	if seq < delta {
		return math.MaxInt32 - (delta - seq) + 1
	}
	return seq - delta
}

// CheckSnapshot checks b, the contents of a producer-state .snapshot
// file, as Open does before it loads one: the version, the CRC, the count
// of entries and each entry's producer id and offset delta. It returns nil,
// or an error wrapping ErrCorruptSnapshot with the position in b of the
// field at fault (-1 for a file too short for its header).
func CheckSnapshot(b []byte) (pos int64, err error) {
	be := binary.BigEndian
	if len(b) < snapshotHeaderSize {
		return -1, fmt.Errorf("%d bytes, shorter than the %d-byte header: %w", len(b), snapshotHeaderSize, ErrCorruptSnapshot)
	}
	if v := int16(be.Uint16(b)); v != snapshotVersion {
		return 0, fmt.Errorf("version %d, want %d: %w", v, snapshotVersion, ErrCorruptSnapshot)
	}
	if crc, want := crc32.Checksum(b[snapshotEntriesFrom:], castagnoli), be.Uint32(b[2:]); crc != want {
		return 2, fmt.Errorf("crc %#08x, computed %#08x: %w", want, crc, ErrCorruptSnapshot)
	}
	n := int64(int32(be.Uint32(b[snapshotEntriesFrom:])))
	if n < 0 || int64(len(b)-snapshotHeaderSize) != n*snapshotEntrySize {
		return snapshotEntriesFrom, fmt.Errorf("%d bytes do not hold the %d entries it counts: %w", len(b), n, ErrCorruptSnapshot)
	}
	for p := snapshotHeaderSize; p < len(b); p += snapshotEntrySize {
		if id, delta := int64(be.Uint64(b[p:])), int32(be.Uint32(b[p+22:])); id < 0 || delta < 0 {
			return int64(p), fmt.Errorf("an entry of producer %d with offset delta %d: %w", id, delta, ErrCorruptSnapshot)
		}
	}
	return -1, nil
}

// decodeSnapshot reads a snapshot into a producer state, once CheckSnapshot
// has passed it.
func decodeSnapshot(b []byte) (producerState, error) {
	if _, err := CheckSnapshot(b); err != nil {
		return producerState{}, err
	}
	be := binary.BigEndian
	n := len(b[snapshotHeaderSize:]) / snapshotEntrySize
	// The entries in one allocation: a snapshot of many producers loads
	// at Open, which a clean shutdown makes fast.
	ps := producerState{entries: make(map[int64]*producerEntry, n)}
	block := make([]producerEntry, 0, n)
	for p := snapshotHeaderSize; p < len(b); p += snapshotEntrySize {
		x := b[p : p+snapshotEntrySize]
		id := int64(be.Uint64(x))
		epoch := int16(be.Uint16(x[8:]))
		lastSeq := int32(be.Uint32(x[10:]))
		lastOffset := int64(be.Uint64(x[14:]))
		delta := int32(be.Uint32(x[22:]))
		ts := int64(be.Uint64(x[26:]))
		coordinatorEpoch := int32(be.Uint32(x[34:]))
		txnFirst := int64(be.Uint64(x[38:]))
		e := ps.entries[id]
		if e == nil {
			block = append(block, *newProducerEntry(id))
			e = &block[len(block)-1]
			ps.entries[id] = e
		}
		e.setEpoch(epoch)
		if lastOffset >= 0 {
			e.addBatch(producerBatchMeta{
				firstSeq:    seqSub(lastSeq, delta),
				lastSeq:     lastSeq,
				firstOffset: lastOffset - int64(delta),
				lastOffset:  lastOffset,
				timestamp:   ts,
			})
		}
		e.lastTimestamp = ts
		e.coordinatorEpoch = coordinatorEpoch
		e.txnFirst = max(-1, txnFirst)
	}
	for _, e := range ps.entries {
		if e.txnFirst >= 0 {
			ps.addTxn(txnSpan{pid: e.id, first: e.txnFirst, last: -1})
		}
	}
	return ps, nil
}

// snapshotPath returns the path of the snapshot at offset.
func (p *Partition) snapshotPath(offset int64) string {
	return filepath.Join(p.dir, segment.FileName(offset, snapshotSuffix))
}

// pendingSnapshot is a snapshot taken at a roll, written once the segment
// it follows is synced.
type pendingSnapshot struct {
	offset int64
	data   []byte
}

// takeSnapshotMuLocked takes a snapshot of the producer state at the end
// offset, for the next flush to write. The caller holds mu.
func (p *Partition) takeSnapshotMuLocked() {
	p.mu.pendingSnaps = append(p.mu.pendingSnaps, pendingSnapshot{offset: p.end.Load(), data: encodeSnapshot(&p.mu.producers)})
}

// writeSnapshotsSyncMuLocked writes snapshots taken at rolls, once the
// segments below them are synced. A snapshot that cannot be written is
// logged and dropped: it only makes a rebuild after a crash read more of
// the log. The caller holds syncMu, not mu.
func (p *Partition) writeSnapshotsSyncMuLocked(snaps []pendingSnapshot) {
	for _, s := range snaps {
		if !p.writeSnapshot(s.offset, s.data) {
			continue
		}
		p.mu.Lock()
		p.addSnapshotMuLocked(s.offset)
		// Retention may have removed the segments below it meanwhile.
		p.removeSnapshotsBeforeMuLocked(p.state.Load().segs[0].seg.Base())
		p.mu.Unlock()
	}
}

// writeSnapshot writes a snapshot file atomically (fsynced, and its name),
// and reports whether it did; a failure is logged.
func (p *Partition) writeSnapshot(offset int64, data []byte) bool {
	if err := vfs.WriteFileAtomic(p.fsys, p.snapshotPath(offset), data); err != nil {
		p.cfg.Logger.Warn("partition: cannot write a producer state snapshot; a rebuild after a crash reads more of the log",
			"dir", p.dir, "offset", offset, "err", err)
		return false
	}
	return true
}

// addSnapshotMuLocked enters the snapshot at offset into the partition's
// list. The caller holds mu.
func (p *Partition) addSnapshotMuLocked(offset int64) {
	if i, found := slices.BinarySearch(p.mu.snaps, offset); !found {
		p.mu.snaps = slices.Insert(p.mu.snaps, i, offset)
	}
}

// removeSnapshotMuLocked removes the snapshot file at offset (best effort:
// one left behind is removed or passed over at the next Open).
func (p *Partition) removeSnapshotMuLocked(offset int64) {
	if i, found := slices.BinarySearch(p.mu.snaps, offset); found {
		p.mu.snaps = slices.Delete(p.mu.snaps, i, i+1)
	}
	if err := p.fsys.Remove(p.snapshotPath(offset)); err != nil && !errors.Is(err, os.ErrNotExist) {
		p.cfg.Logger.Warn("partition: cannot remove a producer state snapshot", "dir", p.dir, "offset", offset, "err", err)
	}
}

// removeSnapshotsPastMuLocked removes the snapshots taken past offset: they
// describe records the log no longer holds.
func (p *Partition) removeSnapshotsPastMuLocked(offset int64) {
	for len(p.mu.snaps) > 0 && p.mu.snaps[len(p.mu.snaps)-1] > offset {
		p.removeSnapshotMuLocked(p.mu.snaps[len(p.mu.snaps)-1])
	}
}

// removeSnapshotsBeforeMuLocked removes the snapshots taken before offset,
// the base of the first segment left, except the latest: Kafka's
// deleteSnapshotsBefore as retention calls it.
func (p *Partition) removeSnapshotsBeforeMuLocked(offset int64) {
	for len(p.mu.snaps) > 1 && p.mu.snaps[0] < offset {
		p.removeSnapshotMuLocked(p.mu.snaps[0])
	}
}

// loadProducersMuLocked sets the producer state from the latest snapshot
// at or below the end offset, and the log after it, as Kafka's
// ProducerStateManager.truncateAndReload and UnifiedLog's
// rebuildProducerState do: snapshots past the end go (and those below the
// first segment, but the latest), a snapshot that
// fails its checks is logged and removed and the one before it tried, and
// without one the log is read from its start; except on a clean open
// (clean) without any snapshot, which takes the state for empty without
// reading the log, as Kafka does for a log written before producer state
// existed. With index, ABORT markers read from the log are entered into
// the aborted-transaction index again. The caller holds mu (or is Open).
func (p *Partition) loadProducersMuLocked(clean, index bool) error {
	end := p.end.Load()
	p.removeSnapshotsPastMuLocked(end)
	// Those a retention removed the segments of, before a crash.
	p.removeSnapshotsBeforeMuLocked(p.state.Load().segs[0].seg.Base())
	p.mu.producers = producerState{}
	if len(p.mu.snaps) == 0 && clean {
		p.publishTxnsMuLocked()
		return nil
	}
	from := int64(0)
	for len(p.mu.snaps) > 0 {
		off := p.mu.snaps[len(p.mu.snaps)-1]
		data, err := vfs.ReadFile(p.fsys, p.snapshotPath(off))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("partition: reading the producer snapshot of %s at %d: %w", p.name, off, err)
		}
		var ps producerState
		if err == nil {
			ps, err = decodeSnapshot(data)
		}
		if err != nil {
			p.cfg.Logger.Warn("partition: passing over a producer state snapshot that fails its checks",
				"dir", p.dir, "offset", off, "err", err)
			p.removeSnapshotMuLocked(off)
			continue
		}
		p.mu.producers = ps
		from = off
		break
	}
	if from < end {
		if err := p.replayProducersMuLocked(from, index); err != nil {
			return err
		}
	}
	p.expireMuLocked(p.cfg.Now())
	p.publishTxnsMuLocked()
	return nil
}

// liveProducerOffsetsMuLocked maps each producer the partition remembers a
// batch of to the offset its last batch ends at, for compaction to keep
// that batch (empty if its records go), as Kafka's cleaner keeps the last
// batch of each active producer: the state can then be rebuilt from the log
// without a snapshot. A batch of an aborted transaction is not kept: its
// records and marker go, and the epoch the producer aborted at is all a
// rebuild would learn from it. The caller holds mu.
func (p *Partition) liveProducerOffsetsMuLocked() map[int64]int64 {
	if len(p.mu.producers.entries) == 0 {
		return nil
	}
	out := make(map[int64]int64, len(p.mu.producers.entries))
	for id, e := range p.mu.producers.entries {
		if e.n == 0 {
			continue
		}
		last := e.last().lastOffset
		aborted := false
		for _, t := range p.AbortedTxns(last, last+1) {
			if t.ProducerID == id && t.FirstOffset <= last && last < t.LastOffset {
				aborted = true
				break
			}
		}
		if !aborted {
			out[id] = last
		}
	}
	return out
}

// snapshotOffsets lists the snapshot files of the partition's directory,
// from the names read at Open.
func snapshotOffsets(names []string) []int64 {
	var out []int64
	for _, name := range names {
		if base, suffix, err := segment.ParseFileName(name); err == nil && suffix == snapshotSuffix {
			out = append(out, base)
		}
	}
	slices.SortFunc(out, cmp.Compare)
	return out
}

// closeSnapshotMuLocked writes a snapshot at the end offset as Close
// leaves the partition, as Kafka takes one at shutdown, so that the next
// Open reads the state without reading the log; unless one is there
// already (nothing was appended since), or the partition has no producer
// and no snapshot (Open then finds none, and takes the state for empty, as
// it is: no file is made for it). A snapshot that cannot be written is
// logged: Open then reads the log after an earlier one. The caller holds
// mu and syncMu.
func (p *Partition) closeSnapshotMuLocked() {
	end := p.end.Load()
	if len(p.mu.producers.entries) == 0 && len(p.mu.snaps) == 0 {
		return
	}
	if _, found := slices.BinarySearch(p.mu.snaps, end); found {
		return
	}
	if p.writeSnapshot(end, encodeSnapshot(&p.mu.producers)) {
		p.addSnapshotMuLocked(end)
	}
}
