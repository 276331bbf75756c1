package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// logFile reads the entries of a .log file one by one, without loading
// the whole file.
type logFile struct {
	f    *os.File
	size int64
	buf  []byte
}

func openLogFile(name string) (*logFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &logFile{f: f, size: info.Size()}, nil
}

func (l *logFile) Close() error { return l.f.Close() }

// entryAt reads the entry (batch or legacy message) at pos: its header and
// bytes, with the reason it is not whole (an error matching
// log.ErrIncomplete or log.ErrCorrupt) if it is not, and whether the bytes
// from pos on are all zeros (preallocated space, not an entry).
func (l *logFile) entryAt(pos int64) (log.BatchHeader, []byte, bool, error) {
	if pos < 0 || pos >= l.size {
		return log.BatchHeader{}, nil, false, fmt.Errorf("log: position %d is past the end of the file's %d bytes: %w", pos, l.size, log.ErrIncomplete)
	}
	hdr := make([]byte, min(int64(log.BatchHeaderSize), l.size-pos))
	if _, err := l.f.ReadAt(hdr, pos); err != nil && err != io.EOF {
		return log.BatchHeader{}, nil, false, err
	}
	if isZeros(hdr) && l.zerosFrom(pos) {
		return log.BatchHeader{}, nil, true, nil
	}
	h, err := log.ReadHeader(hdr)
	if err != nil {
		return h, nil, false, err
	}
	if int64(h.Size()) > l.size-pos {
		return h, nil, false, fmt.Errorf("log: batch needs %d bytes, %d remain: %w", h.Size(), l.size-pos, log.ErrIncomplete)
	}
	if cap(l.buf) < h.Size() {
		l.buf = make([]byte, h.Size())
	}
	b := l.buf[:h.Size()]
	if _, err := l.f.ReadAt(b, pos); err != nil && err != io.EOF {
		return h, nil, false, err
	}
	return h, b, false, nil
}

// zerosFrom reports whether the file holds only zeros from pos on.
func (l *logFile) zerosFrom(pos int64) bool {
	buf := make([]byte, 64<<10)
	for at := pos; at < l.size; at += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), l.size-at)]
		if _, err := l.f.ReadAt(b, at); err != nil && err != io.EOF {
			return false
		}
		if !isZeros(b) {
			return false
		}
	}
	return true
}

func isZeros(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// reasonOf is an error's reason without the log package's prefix and
// sentinel.
func reasonOf(err error) string {
	s := strings.TrimPrefix(err.Error(), "log: ")
	for _, sentinel := range []error{log.ErrCorrupt, log.ErrIncomplete} {
		s = strings.TrimSuffix(s, ": "+sentinel.Error())
		s = strings.TrimSuffix(s, ": "+strings.TrimPrefix(sentinel.Error(), "log: "))
	}
	if errors.Is(err, log.ErrIncomplete) {
		s += " (a torn tail)"
	}
	return s
}

// dumpLog prints the batches of a .log file, and with --deep-iteration
// their records, as kafka-dump-log does.
func (d *dumper) dumpLog(name string) error {
	base, _, nameErr := segment.ParseFileName(filepath.Base(name))
	if nameErr == nil {
		if d.a.json() {
			d.emit("log", name, "", field{json: "log_starting_offset", value: base})
		} else {
			fmt.Fprintf(d.out, "Log starting offset: %d\n", base)
		}
	}
	l, err := openLogFile(name)
	if err != nil {
		return err
	}
	defer l.Close()
	var dec log.Decoder
	lastOffset := int64(-1)
	var pos int64
	for pos < l.size {
		h, b, zeros, err := l.entryAt(pos)
		if zeros {
			if !d.a.json() {
				fmt.Fprintf(d.out, "Found %d zero bytes at the end of %s at position %d: space reserved ahead of appends, not damage\n", l.size-pos, filepath.Base(name), pos)
			}
			break
		}
		if err != nil {
			if !errors.Is(err, log.ErrIncomplete) && !errors.Is(err, log.ErrCorrupt) {
				return err
			}
			d.damage(name, pos, l.size-pos, reasonOf(err))
			break
		}
		_, crcErr := log.CheckBatch(b)
		d.printBatch(name, h, pos, crcErr == nil)
		if crcErr != nil {
			d.damagedInThisFile = true
			if d.a.json() {
				d.emit("damage", name, "", field{json: "position", value: pos}, field{json: "reason", value: reasonOf(crcErr)})
			} else {
				fmt.Fprintf(d.out, "Found a corrupt batch in %s at position %d: %s\n", filepath.Base(name), pos, reasonOf(crcErr))
			}
		} else if d.flags.deep {
			if err := d.printRecords(name, &dec, b, h, &lastOffset); err != nil {
				d.damage(name, pos, int64(h.Size()), reasonOf(err))
			}
		}
		pos += int64(h.Size())
	}
	return nil
}

// deleteHorizon prints the delete horizon as Kafka's OptionalLong.
func deleteHorizon(h log.BatchHeader) string {
	if h.HasDeleteHorizon() {
		return fmt.Sprintf("OptionalLong[%d]", h.BaseTimestamp)
	}
	return "OptionalLong.empty"
}

// timestampType is the batch's timestamp type as Kafka names it; a magic
// 0 message has none.
func timestampType(h log.BatchHeader) string {
	if h.Magic == 0 {
		return "NoTimestampType"
	}
	return h.TimestampType().String()
}

// printBatch prints a batch's line, kafka-dump-log's printBatchLevel.
func (d *dumper) printBatch(name string, h log.BatchHeader, pos int64, valid bool) {
	var fs []field
	if h.IsLegacy() {
		fs = append(fs, field{"offset", "offset", h.LastOffset()})
	} else {
		lastSeq := int32(-1)
		if h.BaseSequence >= 0 {
			lastSeq = log.IncrementSequence(h.BaseSequence, h.LastOffsetDelta)
		}
		fs = append(fs,
			field{"baseOffset", "base_offset", h.BaseOffset},
			field{"lastOffset", "last_offset", h.LastOffset()},
			field{"count", "count", h.NumRecords},
			field{"baseSequence", "base_sequence", h.BaseSequence},
			field{"lastSequence", "last_sequence", lastSeq},
			field{"producerId", "producer_id", h.ProducerID},
			field{"producerEpoch", "producer_epoch", h.ProducerEpoch},
			field{"partitionLeaderEpoch", "partition_leader_epoch", h.PartitionLeaderEpoch},
			field{"isTransactional", "is_transactional", h.IsTransactional()},
			field{"isControl", "is_control", h.IsControl()},
			field{"deleteHorizonMs", "", deleteHorizon(h)},
		)
		if d.a.json() && h.HasDeleteHorizon() {
			fs = append(fs, field{json: "delete_horizon_ms", value: h.BaseTimestamp})
		}
	}
	ts := h.MaxTimestamp
	if h.Magic == 0 {
		ts = -1
	}
	fs = append(fs,
		field{"position", "position", pos},
		field{timestampType(h), "max_timestamp", ts},
		field{json: "timestamp_type", value: timestampType(h)},
		field{"size", "size", h.Size()},
		field{"magic", "magic", h.Magic},
		field{"compresscodec", "compresscodec", h.Compression().String()},
		field{"crc", "crc", h.CRC},
		field{"isvalid", "is_valid", valid},
	)
	d.emit("batch", name, "", fs...)
}
