package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/topic"
)

var be = binary.BigEndian

// indexFiles are an index file's entries with the .log beside it, if
// there is one.
type indexFiles struct {
	path string
	base int64
	data []byte
	log  *logFile // nil if there is no .log beside the index
}

func (d *dumper) openIndex(name string) (*indexFiles, error) {
	base, _, err := segment.ParseFileName(filepath.Base(name))
	if err != nil {
		return nil, usagef("%s: not a segment file name (20 digits of base offset, then the suffix)", name)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	ix := &indexFiles{path: name, base: base, data: data}
	logName := filepath.Join(filepath.Dir(name), segment.FileName(base, segment.LogSuffix))
	if l, err := openLogFile(logName); err == nil {
		ix.log = l
	} else if !d.a.json() {
		fmt.Fprintf(d.out, "(no %s beside it: the entries are not checked against the log)\n", filepath.Base(logName))
	}
	return ix, nil
}

func (ix *indexFiles) Close() {
	if ix.log != nil {
		ix.log.Close()
	}
}

// sanityFail reports a failed sanity check, as Kafka's
// CorruptIndexException says it.
func (d *dumper) sanityFail(name, msg string) {
	d.damagedInThisFile = true
	if d.a.json() {
		d.emit("sanity_check", name, "", field{json: "passed", value: false}, field{json: "reason", value: msg})
		return
	}
	fmt.Fprintln(d.out, msg)
}

func (d *dumper) sanityPass(name string) {
	if d.a.json() {
		d.emit("sanity_check", name, "", field{json: "passed", value: true})
		return
	}
	fmt.Fprintf(d.out, "%s passed sanity check.\n", name)
}

// dumpIndex prints an offset index, kafka-dump-log's dumpIndex: the
// entries up to the first zero one (a preallocated file's), each checked
// against the batch at its position.
func (d *dumper) dumpIndex(name string) error {
	ix, err := d.openIndex(name)
	if err != nil {
		return err
	}
	defer ix.Close()
	abs, _ := filepath.Abs(name)
	n := len(ix.data) / 8
	if d.flags.sanity {
		switch {
		case len(ix.data)%8 != 0:
			d.sanityFail(name, fmt.Sprintf("Index file %s is corrupt, found %d bytes which is neither positive nor a multiple of 8.", abs, len(ix.data)))
		case n > 0 && int32(be.Uint32(ix.data[(n-1)*8:])) < 0:
			d.sanityFail(name, fmt.Sprintf("Corrupt index found, index file (%s) has non-zero size but the last offset is %d which is less than the base offset %d.",
				abs, ix.base+int64(int32(be.Uint32(ix.data[(n-1)*8:]))), ix.base))
		default:
			if msg := d.checkIndexEntries(ix); msg != "" {
				d.sanityFail(name, fmt.Sprintf("Corrupt index found, index file (%s): %s.", abs, msg))
			} else {
				d.sanityPass(name)
			}
		}
		return nil
	}
	if n == 0 {
		if !d.a.json() {
			fmt.Fprintf(d.out, "%s is empty.\n", name)
		}
		return nil
	}
	for i := range n {
		rel, pos := int64(be.Uint32(ix.data[i*8:])), int64(be.Uint32(ix.data[i*8+4:]))
		if rel == 0 && i > 0 {
			break // a preallocated file's zero entries
		}
		off := ix.base + rel
		if ix.log != nil {
			h, _, _, err := ix.log.entryAt(pos)
			switch {
			case pos >= ix.log.size || err != nil:
				d.indexMismatches = append(d.indexMismatches, mismatch{name, off, -1})
				d.damagedInThisFile = true
			case h.LastOffset() != off:
				d.indexMismatches = append(d.indexMismatches, mismatch{name, off, h.LastOffset()})
				if h.LastOffset() > off {
					d.damagedInThisFile = true // the offset is in a batch before the position
				}
			}
		}
		d.emit("index_entry", name, "", field{"offset", "offset", off}, field{"position", "position", pos})
	}
	return nil
}

// checkIndexEntries checks the entries of an offset index: strictly
// increasing, within the log, at the start of a batch whose offsets reach
// the entry's offset and that no batch before it holds. It returns what is
// wrong, or "".
func (d *dumper) checkIndexEntries(ix *indexFiles) string {
	if ix.log == nil {
		return ""
	}
	starts, lasts, end := scanBatches(ix.log)
	prevRel, prevPos := int64(-1), int64(-1)
	for i := 0; i+8 <= len(ix.data); i += 8 {
		rel, pos := int64(be.Uint32(ix.data[i:])), int64(be.Uint32(ix.data[i+4:]))
		off := ix.base + rel
		j := indexOf(starts, pos)
		switch {
		case rel <= prevRel:
			return fmt.Sprintf("entry %d has offset %d, not above the previous entry's %d", i/8, off, ix.base+prevRel)
		case pos <= prevPos:
			return fmt.Sprintf("entry %d has position %d, not above the previous entry's %d", i/8, pos, prevPos)
		case pos >= end:
			return fmt.Sprintf("entry %d has position %d, past the end of the log's %d valid bytes", i/8, pos, end)
		case j < 0:
			return fmt.Sprintf("entry %d has position %d, which is not the start of a batch", i/8, pos)
		case j > 0 && lasts[j-1] >= off:
			return fmt.Sprintf("entry %d has offset %d, which is in the batch before its position %d", i/8, off, pos)
		case off > lasts[len(lasts)-1]:
			return fmt.Sprintf("entry %d has offset %d, past the log's last offset %d", i/8, off, lasts[len(lasts)-1])
		}
		prevRel, prevPos = rel, pos
	}
	return ""
}

// scanBatches returns the positions and last offsets of the valid
// batches of a log, and where they end.
func scanBatches(l *logFile) (starts, lasts []int64, end int64) {
	for end < l.size {
		h, b, zeros, err := l.entryAt(end)
		if zeros || err != nil {
			break
		}
		if _, err := log.CheckBatch(b); err != nil {
			break
		}
		starts, lasts = append(starts, end), append(lasts, h.LastOffset())
		end += int64(h.Size())
	}
	return starts, lasts, end
}

func indexOf(sorted []int64, v int64) int {
	lo, hi := 0, len(sorted)
	for lo < hi {
		m := (lo + hi) / 2
		if sorted[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(sorted) && sorted[lo] == v {
		return lo
	}
	return -1
}

// dumpTimeIndex prints a time index, kafka-dump-log's dumpTimeIndex: each
// entry's offset is looked up in the offset index and the log, and the
// batch found must end at it and have the entry's timestamp.
func (d *dumper) dumpTimeIndex(name string) error {
	ix, err := d.openIndex(name)
	if err != nil {
		return err
	}
	defer ix.Close()
	abs, _ := filepath.Abs(name)
	n := len(ix.data) / 12
	if d.flags.sanity {
		switch {
		case len(ix.data)%12 != 0:
			d.sanityFail(name, fmt.Sprintf("Time index file %s is corrupt, found %d bytes which is neither positive nor a multiple of 12.", abs, len(ix.data)))
		case n > 0 && int64(be.Uint64(ix.data[(n-1)*12:])) < int64(be.Uint64(ix.data)):
			d.sanityFail(name, fmt.Sprintf("Corrupt time index found, time index file (%s) has non-zero size but the last timestamp is %d which is less than the first timestamp %d",
				abs, int64(be.Uint64(ix.data[(n-1)*12:])), int64(be.Uint64(ix.data))))
		case n > 0 && int32(be.Uint32(ix.data[(n-1)*12+8:])) < 0:
			d.sanityFail(name, fmt.Sprintf("Corrupt time index found, time index file (%s) has non-zero size but the last offset is %d which is less than the first offset %d",
				abs, ix.base+int64(int32(be.Uint32(ix.data[(n-1)*12+8:]))), ix.base))
		default:
			d.sanityPass(name)
		}
		return nil
	}
	var offIndex []byte
	if data, err := os.ReadFile(filepath.Join(filepath.Dir(name), segment.FileName(ix.base, segment.IndexSuffix))); err == nil {
		offIndex = data[:len(data)/8*8]
	}
	prevTS := int64(-1)
	for i := range n {
		ts, rel := int64(be.Uint64(ix.data[i*12:])), int64(be.Uint32(ix.data[i*12+8:]))
		if rel == 0 && i > 0 {
			break
		}
		off := ix.base + rel
		if ix.log != nil {
			d.checkTimeEntry(name, ix, offIndex, ts, off, prevTS)
		}
		d.emit("time_index_entry", name, "", field{"timestamp", "timestamp", ts}, field{"offset", "offset", off})
		prevTS = ts
	}
	return nil
}

// checkTimeEntry checks one time index entry as kafka-dump-log does.
func (d *dumper) checkTimeEntry(name string, ix *indexFiles, offIndex []byte, ts, off, prevTS int64) {
	var pos int64 // the offset index's lookup: its last entry at or below off
	for i := 0; i+8 <= len(offIndex); i += 8 {
		if ix.base+int64(be.Uint32(offIndex[i:])) > off {
			break
		}
		pos = int64(be.Uint32(offIndex[i+4:]))
	}
	for pos < ix.log.size {
		h, _, zeros, err := ix.log.entryAt(pos)
		if zeros || err != nil {
			break
		}
		if h.LastOffset() < off {
			pos += int64(h.Size())
			continue
		}
		switch {
		case h.LastOffset() != off:
			d.timeNotFound = append(d.timeNotFound, mismatch{name, off, h.LastOffset()})
			d.damagedInThisFile = true
		case h.MaxTimestamp != ts:
			d.timeMismatches = append(d.timeMismatches, mismatch{name, ts, h.MaxTimestamp})
			d.damagedInThisFile = true
		}
		if prevTS >= ts {
			d.timeOutOfOrder = append(d.timeOutOfOrder, mismatch{name, ts, prevTS})
			d.damagedInThisFile = true
		}
		return
	}
	d.timeNotFound = append(d.timeNotFound, mismatch{name, off, -1})
	d.damagedInThisFile = true
}

// dumpSnapshot prints a producer-state snapshot, kafka-dump-log's
// dumpProducerIdSnapshot: one line per entry.
func (d *dumper) dumpSnapshot(name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	const header, entry = 10, 46
	switch {
	case len(data) < header:
		d.damage(name, 0, int64(len(data)), fmt.Sprintf("a snapshot of %d bytes, shorter than its %d-byte header", len(data), header))
		return nil
	case be.Uint16(data) != 1:
		d.damage(name, 0, int64(len(data)), fmt.Sprintf("Snapshot contained an unknown file version %d", be.Uint16(data)))
		return nil
	case (len(data)-header)%entry != 0 || int(be.Uint32(data[6:])) != (len(data)-header)/entry:
		d.damage(name, 6, int64(len(data)), fmt.Sprintf("Snapshot failed schema validation: %d bytes cannot hold the %d entries it counts", len(data), be.Uint32(data[6:])))
		return nil
	}
	if stored, computed := be.Uint32(data[2:]), crc32.Checksum(data[6:], crc32.MakeTable(crc32.Castagnoli)); stored != computed {
		d.damage(name, 2, int64(len(data)), fmt.Sprintf("Snapshot is corrupt (CRC is no longer valid). Stored crc: %d. Computed crc: %d", stored, computed))
		return nil
	}
	for p := header; p+entry <= len(data); p += entry {
		e := data[p:]
		pid, epoch, lastSeq := int64(be.Uint64(e)), int16(be.Uint16(e[8:])), int32(be.Uint32(e[10:]))
		lastOff, delta, ts := int64(be.Uint64(e[14:])), int32(be.Uint32(e[22:])), int64(be.Uint64(e[26:]))
		coord, txnFirst := int32(be.Uint32(e[34:])), int64(be.Uint64(e[38:]))
		txnText := "OptionalLong.empty"
		if txnFirst >= 0 {
			txnText = fmt.Sprintf("OptionalLong[%d]", txnFirst)
		}
		fs := []field{
			{"producerId", "producer_id", pid},
			{"producerEpoch", "producer_epoch", epoch},
			{"coordinatorEpoch", "coordinator_epoch", coord},
			{"currentTxnFirstOffset", "", txnText},
			{"", "current_txn_first_offset", txnFirst},
			{"lastTimestamp", "last_timestamp", ts},
		}
		if lastOff >= 0 {
			fs = append(fs,
				field{"firstSequence", "first_sequence", firstSequence(lastSeq, delta)},
				field{"lastSequence", "last_sequence", lastSeq},
				field{"lastOffset", "last_offset", lastOff},
				field{"offsetDelta", "offset_delta", delta},
				field{"timestamp", "timestamp", ts})
		}
		d.emit("producer", name, "", fs...)
	}
	return nil
}

// dumpTxnIndex prints a .txnindex, kafka-dump-log's dumpTxnIndex.
func (d *dumper) dumpTxnIndex(name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	const entry = segment.AbortedTxnSize
	p := 0
	for ; p+entry <= len(data); p += entry {
		e := data[p:]
		d.emit("aborted_txn", name, "",
			field{"version", "version", be.Uint16(e)},
			field{"producerId", "producer_id", int64(be.Uint64(e[2:]))},
			field{"firstOffset", "first_offset", int64(be.Uint64(e[10:]))},
			field{"lastOffset", "last_offset", int64(be.Uint64(e[18:]))},
			field{"lastStableOffset", "last_stable_offset", int64(be.Uint64(e[26:]))})
	}
	if p < len(data) {
		d.damage(name, int64(p), int64(len(data)-p), fmt.Sprintf("a torn entry: %d bytes of a %d-byte entry", len(data)-p, entry))
	}
	return nil
}

// dumpMetadata prints partition.metadata: its version and topic id.
func (d *dumper) dumpMetadata(name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	id, ok := topic.ParseMetadata(data)
	if !ok {
		d.damage(name, 0, int64(len(data)), fmt.Sprintf("holds %.48q, not \"version: 0\" and a topic id", data))
		return nil
	}
	d.emit("partition_metadata", name, "", field{"version", "version", 0}, field{"topic_id", "topic_id", id.String()})
	return nil
}

// firstSequence is the sequence of a batch's first record given its last
// one's, wrapping past 0 to math.MaxInt32 as Kafka's sequences do
// (DefaultRecordBatch.decrementSequence).
func firstSequence(last, delta int32) int32 {
	if last < delta {
		return int32(int64(math.MaxInt32) - int64(delta) + int64(last) + 1)
	}
	return last - delta
}
