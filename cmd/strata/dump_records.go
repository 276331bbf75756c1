package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/stratalog/strata/log"
)

// recordIndent starts a record's line, as kafka-dump-log's.
const recordIndent = "| "

// printRecords prints the records of a batch that passed its CRC check,
// kafka-dump-log --deep-iteration's lines, and notes offsets that do not
// follow one another (lastOffset: the last offset printed, across
// batches).
func (d *dumper) printRecords(name string, dec *log.Decoder, b []byte, h log.BatchHeader, lastOffset *int64) error {
	if h.IsLegacy() {
		return d.printLegacy(name, b, h, lastOffset)
	}
	it, err := dec.Iter(b, h)
	if err != nil {
		return err
	}
	var r log.Record
	for it.Next(&r) {
		if *lastOffset >= 0 && r.Offset != *lastOffset+1 {
			d.nonConsecutive = append(d.nonConsecutive, mismatch{name, *lastOffset, r.Offset})
		}
		*lastOffset = r.Offset
		ts := it.StoredTimestamp()
		if h.TimestampType() == log.LogAppendTime {
			ts = h.MaxTimestamp
		}
		seq := int32(-1)
		if h.BaseSequence >= 0 {
			seq = log.IncrementSequence(h.BaseSequence, int32(r.Offset-h.BaseOffset))
		}
		keys := make([]string, len(r.Headers))
		for i, hd := range r.Headers {
			keys[i] = hd.Key
		}
		fs := []field{
			{"offset", "offset", r.Offset},
			{h.TimestampType().String(), "timestamp", ts},
			{"keySize", "key_size", size(r.Key)},
			{"valueSize", "value_size", size(r.Value)},
			{"sequence", "sequence", seq},
			{"headerKeys", "", "[" + strings.Join(keys, ",") + "]"},
			{"", "header_keys", keys},
		}
		if h.IsControl() {
			fs = append(fs, controlFields(r)...)
		} else if d.flags.printData {
			fs = append(fs, d.dataFields(r)...)
		}
		d.emit("record", name, recordIndent, fs...)
	}
	return it.Err()
}

// size is a key's or value's size as Kafka prints it: -1 for null.
func size(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// controlFields describe a control record: the transaction marker, as
// kafka-dump-log prints it.
func controlFields(r log.Record) []field {
	t, err := log.ParseControlKey(r.Key)
	if err != nil {
		return []field{{"controlType", "control_type", "unknown: " + reasonOf(err)}}
	}
	switch t {
	case log.ControlCommit, log.ControlAbort:
		epoch, err := log.ParseEndTxnMarker(r.Value)
		if err != nil {
			return []field{{"endTxnMarker", "end_txn_marker", t.String()}, {"error", "error", reasonOf(err)}}
		}
		return []field{{"endTxnMarker", "end_txn_marker", t.String()}, {"coordinatorEpoch", "coordinator_epoch", epoch}}
	}
	return []field{{"controlType", "control_type", fmt.Sprintf("%s(%d)", t, int16(t))}}
}

// dataFields are a record's key and value (--print-data-log), decoded by
// --offsets-decoder or --transaction-log-decoder if given: kafka-dump-log
// prints a null key or value not at all.
func (d *dumper) dataFields(r log.Record) []field {
	var key, value *string
	switch {
	case d.flags.offsets:
		k, v := decodeOffsetsRecord(r)
		key, value = &k, &v
	case d.flags.txnLog:
		k, v := decodeTxnRecord(r)
		key, value = &k, &v
	default:
		if r.Key != nil {
			k := string(r.Key)
			key = &k
		}
		if r.Value != nil {
			v := string(r.Value)
			value = &v
		}
	}
	var fs []field
	if key != nil {
		fs = append(fs, field{"key", "key", *key})
	}
	if value != nil {
		fs = append(fs, field{"payload", "payload", *value})
	}
	return fs
}

// printLegacy prints the record of an uncompressed message of magic 0 or
// 1, which the log package checks but does not read; the messages inside
// a compressed one are not read.
func (d *dumper) printLegacy(name string, b []byte, h log.BatchHeader, lastOffset *int64) error {
	if h.Compression() != log.None {
		d.emit("record", name, recordIndent, field{"offset", "offset", h.LastOffset()},
			field{"note", "note", fmt.Sprintf("a legacy message set compressed with %s: its messages are not read", h.Compression())})
		return nil
	}
	p := 18 // offset, length, crc, magic, attributes
	if h.Magic == 1 {
		p += 8
	}
	be := binary.BigEndian
	field2 := func() ([]byte, error) {
		if p+4 > len(b) {
			return nil, log.Corruption("legacy message ends inside a length")
		}
		n := int32(be.Uint32(b[p:]))
		p += 4
		if n < 0 {
			return nil, nil
		}
		if int(n) > len(b)-p {
			return nil, log.Corruption(fmt.Sprintf("legacy message field of %d bytes, %d remain", n, len(b)-p))
		}
		v := b[p : p+int(n)]
		p += int(n)
		return v, nil
	}
	key, err := field2()
	if err != nil {
		return err
	}
	value, err := field2()
	if err != nil {
		return err
	}
	off := h.BaseOffset
	if *lastOffset >= 0 && off != *lastOffset+1 {
		d.nonConsecutive = append(d.nonConsecutive, mismatch{name, *lastOffset, off})
	}
	*lastOffset = off
	fs := []field{
		{"offset", "offset", off},
		{timestampType(h), "timestamp", map[bool]int64{true: h.MaxTimestamp, false: -1}[h.Magic == 1]},
		{"keySize", "key_size", size(key)},
		{"valueSize", "value_size", size(value)},
		{"isValid", "is_valid", crc32.ChecksumIEEE(b[16:]) == h.CRC},
		{"crc", "crc", h.CRC},
	}
	if d.flags.printData {
		if key != nil {
			fs = append(fs, field{"key", "key", string(key)})
		}
		if value != nil {
			fs = append(fs, field{"payload", "payload", string(value)})
		}
	}
	d.emit("record", name, recordIndent, fs...)
	return nil
}
