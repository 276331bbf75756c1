//go:build unix

package peers

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

func init() {
	register(Peer{
		Name:     "format-floor",
		Open:     openFormatFloor,
		Baseline: true,
		Only:     "w4",
		Note:     "baseline of W4 alone, not a log: Strata writes the log (as the strata peer does, its W2 not shown); the scan reads the partition's .log files through read-only mappings of its own (made at the first scan after a file grew, as raw-mmap's), steps from batch to batch by their lengths and through each batch's records by their varints, and hands over each record's key and value, nothing checked but that they stay inside their record and batch: no CRC, no index, no iterator. What a plain reader of Kafka's v2 batches through a mapping reaches with none of Strata's code",
	})
}

// errFloorBatch is a batch or record format-floor cannot step through: its
// lengths reach outside it, or it is compressed.
var errFloorBatch = errors.New("peers: format-floor: a batch it cannot walk")

// Offsets into a v2 batch (Kafka's DefaultRecordBatch) that the walk
// reads.
const (
	floorLengthAt     = 8  // batchLength, int32: the bytes after this field
	floorMagicAt      = 16 // magic, int8: 2
	floorAttributesAt = 21 // attributes, int16: compression in bits 0-2, control in bit 5
	floorLastDeltaAt  = 23 // lastOffsetDelta, int32
	floorCountAt      = 57 // records count, int32
	floorRecordsAt    = 61 // the first record
)

// formatFloor writes through Strata and scans the bytes Strata wrote with
// nothing of Strata's: what is left of a scan once Strata's checks,
// iterator and API are taken away, the format's own cost (a varint chain
// per record) and the memory's.
type formatFloor struct {
	*strataLog
	part string            // the partition's directory
	maps map[string][]byte // each .log file's mapping, by path
}

func openFormatFloor(dir string, o Options) (Log, error) {
	l, err := openStore(dir, o)
	if err != nil {
		return nil, err
	}
	return &formatFloor{strataLog: l, part: filepath.Join(dir, strataTopic+"-0"), maps: map[string][]byte{}}, nil
}

// mapped returns a read-only mapping of the whole file at path, mapping it
// again when it grew past the one held. Zeros that Strata wrote ahead of
// its appends come with it, and end the walk.
func (f *formatFloor) mapped(path string) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil, err
	}
	m := f.maps[path]
	if int64(len(m)) >= st.Size {
		return m, nil
	}
	if m != nil {
		delete(f.maps, path)
		if err := unix.Munmap(m); err != nil {
			return nil, err
		}
	}
	if st.Size == 0 {
		return nil, nil
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	m, err = unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ, unix.MAP_SHARED)
	err = errors.Join(err, unix.Close(fd))
	if err != nil {
		return nil, err
	}
	f.maps[path] = m
	return m, nil
}

func (f *formatFloor) Scan(from int64, fn func(i int64, key, value []byte) bool) error {
	entries, err := os.ReadDir(f.part)
	if err != nil {
		return err
	}
	var logs []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".log") {
			logs = append(logs, e.Name())
		}
	}
	slices.Sort(logs) // the names are the base offsets, zero-padded
	for _, name := range logs {
		m, err := f.mapped(filepath.Join(f.part, name))
		if err != nil {
			return err
		}
		more, err := floorWalk(m, from, fn)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// floorWalk hands fn each record of the batches in m from offset from on,
// up to the end of m or the first batch of length zero, and reports false
// when fn asked to stop.
func floorWalk(m []byte, from int64, fn func(i int64, key, value []byte) bool) (bool, error) {
	for at := 0; at+floorRecordsAt <= len(m); {
		length := int(binary.BigEndian.Uint32(m[at+floorLengthAt:]))
		if length == 0 {
			return true, nil // zeros written ahead: the end of the batches
		}
		end := at + 12 + length
		if end > len(m) || end < at+floorRecordsAt || m[at+floorMagicAt] != 2 {
			return false, fmt.Errorf("%w: at %d", errFloorBatch, at)
		}
		base := int64(binary.BigEndian.Uint64(m[at:]))
		attrs := binary.BigEndian.Uint16(m[at+floorAttributesAt:])
		last := base + int64(int32(binary.BigEndian.Uint32(m[at+floorLastDeltaAt:])))
		if attrs&0x20 != 0 || last < from {
			at = end // a transaction's marker, or records before from
			continue
		}
		if attrs&7 != 0 {
			return false, fmt.Errorf("%w: compressed, at %d", errFloorBatch, at)
		}
		count := int(int32(binary.BigEndian.Uint32(m[at+floorCountAt:])))
		b := m[at+floorRecordsAt : end : end]
		p := 0
		for range count {
			var key, value []byte
			var delta int64
			if p, delta, key, value = floorRecord(b, p); p < 0 {
				return false, fmt.Errorf("%w: a record of the batch at %d", errFloorBatch, at)
			}
			if i := base + delta; i >= from && !fn(i, key, value) {
				return false, nil
			}
		}
		at = end
	}
	return true, nil
}

// floorRecord reads the record at b[p:] and returns where it ends, its
// offset delta, key and value, or a negative end when its lengths reach
// past it or past b.
func floorRecord(b []byte, p int) (int, int64, []byte, []byte) {
	n, p := floorVarint(b, p)
	end := p + int(n)
	if p < 0 || n < 0 || end > len(b) {
		return -1, 0, nil, nil
	}
	r := b[:end]
	q := p + 1 // attributes
	_, q = floorVarint(r, q)
	delta, q := floorVarint(r, q)
	key, q := floorBytes(r, q)
	value, q := floorBytes(r, q)
	headers, q := floorVarint(r, q)
	for ; headers > 0 && q >= 0; headers-- {
		_, q = floorBytes(r, q)
		_, q = floorBytes(r, q)
	}
	if q != end {
		return -1, 0, nil, nil
	}
	return end, delta, key, value
}

// floorBytes reads a varint length and that many bytes at b[p:] (nil for
// -1, a null key or value), or returns a negative position.
func floorBytes(b []byte, p int) ([]byte, int) {
	n, p := floorVarint(b, p)
	switch {
	case p < 0 || n < -1 || int64(len(b)-p) < n:
		return nil, -1
	case n == -1:
		return nil, p
	}
	return b[p : p+int(n) : p+int(n)], p + int(n)
}

// floorVarint reads the zigzag varint at b[p:] and returns its value and
// where it ends, or a negative position if it runs past b or past ten
// bytes (a negative p passes through).
func floorVarint(b []byte, p int) (int64, int) {
	if p < 0 || p >= len(b) {
		return 0, -1
	}
	if c := b[p]; c < 0x80 {
		return int64(c>>1) ^ -int64(c&1), p + 1
	} else if p+1 < len(b) && b[p+1] < 0x80 {
		u := uint64(c&0x7f) | uint64(b[p+1])<<7
		return int64(u>>1) ^ -int64(u&1), p + 2
	}
	u, n := binary.Uvarint(b[p:])
	if n <= 0 {
		return 0, -1
	}
	return int64(u>>1) ^ -int64(u&1), p + n
}

func (f *formatFloor) Close() error {
	var errs []error
	for path, m := range f.maps {
		errs = append(errs, unix.Munmap(m))
		delete(f.maps, path)
	}
	return errors.Join(append(errs, f.strataLog.Close())...)
}
