package strata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// maxFindingsPerFile bounds the index entries reported per file; the
// count of the others is said in the last.
const maxFindingsPerFile = 5

// checkPartition checks one partition directory: its segments in order,
// its checkpoints and small files.
func (v *verifier) checkPartition(p partitionDir, e registryEntry, known bool) error {
	v.rep.Partitions++
	names, err := v.fsys.ReadDir(p.path)
	if err != nil {
		return fmt.Errorf("strata: verifying %s: %w", p.path, err)
	}
	var bases []int64
	for _, name := range names {
		path := filepath.Join(p.path, name)
		base, suffix, err := segment.ParseFileName(name)
		switch {
		case err == nil && suffix == segment.LogSuffix:
			bases = append(bases, base)
		case err == nil && suffix == segment.TxnIndexSuffix:
			v.checkTxnIndex(path, base)
		case err == nil && suffix == ".snapshot":
			v.checkSnapshot(path)
		case strings.HasSuffix(name, segment.CleanedSuffix), strings.HasSuffix(name, segment.SwapSuffix):
			v.add(path, -1, false, "left by a compaction that was interrupted", "Open completes the swap or removes the file")
		case strings.HasSuffix(name, segment.DeletedSuffix):
			v.add(path, -1, false, "a segment deleted by retention or compaction, not yet removed", "Open removes it")
		case strings.HasSuffix(name, vfs.TempSuffix):
			v.add(path, -1, false, "a temporary file of a write that did not finish", "Open removes it")
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	rp := v.checkCheckpoints(p.path)
	v.checkMetadata(p.path, e, known)
	from := 0 // Open recovers after a crash from the segment holding the recovery point
	for i, base := range bases {
		if base <= rp {
			from = i
		}
	}
	prevNext := int64(-1)
	for i, base := range bases {
		s := segCheck{
			dir:       p.path,
			base:      base,
			last:      i == len(bases)-1,
			unsettled: !v.rep.Clean && (rp < 0 || i >= from),
		}
		next, err := v.checkSegment(s, prevNext)
		if err != nil {
			return err
		}
		prevNext = next
	}
	return nil
}

// segCheck is a segment being checked.
type segCheck struct {
	dir  string
	base int64
	// last says it is the partition's last segment: the active one.
	last bool
	// unsettled says Open would recover it were the directory opened now:
	// no clean shutdown, and at or after the recovery point. Its index
	// files may be preallocated (zeros past their entries) and are
	// rebuilt by Open.
	unsettled bool
	// cut says the log has bytes recovery would cut: index entries past
	// the valid batches go with them, and are not reported.
	cut bool
}

// batchInfo is a batch found in a .log file.
type batchInfo struct {
	pos, base, last int64
	// maxTS is the largest timestamp of the segment up to this batch.
	maxTS int64
}

// checkSegment checks a segment's .log file and its indexes, and returns
// the offset after its last valid batch (prevNext if it has none).
func (v *verifier) checkSegment(s segCheck, prevNext int64) (int64, error) {
	path := filepath.Join(s.dir, segment.FileName(s.base, segment.LogSuffix))
	f, err := v.fsys.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) && v.rep.Live {
		return prevNext, nil // removed by retention or compaction while the check ran
	}
	if err != nil {
		return 0, fmt.Errorf("strata: verifying %s: %w", path, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0, fmt.Errorf("strata: verifying %s: %w", path, err)
	}
	v.rep.Segments++
	if prevNext > s.base {
		v.add(path, -1, true, fmt.Sprintf("base offset %d is below the previous segment's next offset %d: the segments overlap", s.base, prevNext),
			"Open refuses the partition: remove the segment that holds the duplicate offsets")
	}
	var batches []batchInfo
	next, maxTS := s.base, int64(-1)
	var pos int64
	r := &logReader{f: f}
	for pos < size {
		e, err := r.entry(pos, size, next, s.base)
		if err == nil && e.bad() && s.last && v.rep.Live {
			e, size, err = r.settle(e, pos, size, next, s.base)
		}
		if err != nil {
			return 0, fmt.Errorf("strata: verifying %s: %w", path, err)
		}
		switch {
		case e.zeros:
			v.add(path, pos, false, fmt.Sprintf("%d zero bytes after the last batch, reserved ahead of appends", size-pos), "Open trims them")
		case e.nonZeroAt >= 0:
			v.add(path, e.nonZeroAt, true, fmt.Sprintf("bytes after the zeros that start at position %d", pos),
				fmt.Sprintf("recovery cuts the segment at position %d: %d bytes would be dropped", pos, size-pos))
		case e.err != nil:
			v.badTail(path, s, pos, size, e.err, r.dropped(pos, size))
		}
		if e.bad() || e.zeros {
			break
		}
		h := e.h
		if !h.IsLegacy() && h.TimestampType() == log.CreateTime && !h.HasDeleteHorizon() && h.BaseTimestamp > h.MaxTimestamp {
			v.add(path, pos, false, fmt.Sprintf("batch at offset %d: its first timestamp %d is above its max timestamp %d", h.BaseOffset, h.BaseTimestamp, h.MaxTimestamp),
				"none: Open keeps the batch, whose CRC checks; lookups by time may miss it")
		}
		maxTS = max(maxTS, h.MaxTimestamp)
		batches = append(batches, batchInfo{pos: pos, base: h.BaseOffset, last: h.LastOffset(), maxTS: maxTS})
		next = h.NextOffset()
		pos += int64(h.Size())
		v.rep.Batches++
		v.advance(int64(h.Size()))
	}
	v.rep.Bytes += pos
	v.advance(size - pos)
	s.cut = pos < size
	v.checkOffsetIndex(s, batches, pos)
	v.checkTimeIndex(s, batches)
	if len(batches) == 0 {
		return max(prevNext, s.base), nil
	}
	return next, nil
}

// badTail reports the torn or damaged batch at pos, and what recovery
// would cut.
func (v *verifier) badTail(path string, s segCheck, pos, size int64, err error, dropped string) {
	cut := size - pos
	reason := strings.TrimPrefix(err.Error(), "log: ")
	for _, sentinel := range []error{log.ErrCorrupt, log.ErrIncomplete} {
		reason = strings.TrimSuffix(reason, ": "+sentinel.Error())
		reason = strings.TrimSuffix(reason, ": "+strings.TrimPrefix(sentinel.Error(), "log: "))
	}
	switch {
	case errors.Is(err, log.ErrIncomplete) && s.last && v.rep.Live:
		v.add(path, pos, false, fmt.Sprintf("active segment tail still being written: %d bytes after position %d (%s)", cut, pos, reason),
			"none while the writer runs; after a crash Open would cut them")
	case errors.Is(err, log.ErrIncomplete):
		v.add(path, pos, true, fmt.Sprintf("torn tail: %s", reason),
			fmt.Sprintf("torn tail: %d bytes after position %d would be cut%s", cut, pos, dropped))
	default:
		v.add(path, pos, true, fmt.Sprintf("corrupt batch: %s", reason),
			fmt.Sprintf("recovery cuts the segment at position %d: %d bytes would be dropped%s", pos, cut, dropped))
	}
}

// dropped describes the batches from pos on that a cut there would drop,
// as far as their headers read (their CRCs unchecked): " (3 batches,
// offsets 10 to 14)", " (a torn batch, offsets 10 to 14)" for a batch at
// pos whose header reads but whose end is past the file's, or "" if none
// reads.
func (r *logReader) dropped(pos, size int64) string {
	var n, first, last int64
	hdr := make([]byte, log.BatchHeaderSize)
	for pos+log.PrefixSize <= size {
		k, err := r.f.ReadAt(hdr[:min(int64(len(hdr)), size-pos)], pos)
		if err != nil && err != io.EOF {
			break
		}
		h, err := log.ReadHeader(hdr[:k])
		if err != nil {
			break
		}
		if int64(h.Size()) > size-pos {
			if n == 0 && k == len(hdr) {
				return torn(h)
			}
			break
		}
		if n == 0 {
			first = h.BaseOffset
		}
		n, last = n+1, h.LastOffset()
		pos += int64(h.Size())
	}
	switch {
	case n == 0:
		return ""
	case n == 1 && first == last:
		return fmt.Sprintf(" (1 batch, offset %d)", first)
	case n == 1:
		return fmt.Sprintf(" (1 batch, offsets %d to %d)", first, last)
	}
	return fmt.Sprintf(" (%d batches, offsets %d to %d)", n, first, last)
}

// torn describes the torn batch h: its header was written, its end not.
func torn(h log.BatchHeader) string {
	if h.BaseOffset == h.LastOffset() {
		return fmt.Sprintf(" (a torn batch, offset %d)", h.BaseOffset)
	}
	return fmt.Sprintf(" (a torn batch, offsets %d to %d)", h.BaseOffset, h.LastOffset())
}

// logReader reads the entries of a .log file one at a time.
type logReader struct {
	f   vfs.File
	buf []byte
}

// logEntry is what is at a position of a .log file.
type logEntry struct {
	h log.BatchHeader
	// zeros says the file holds only zeros from the position on.
	zeros bool
	// nonZeroAt is the position of a byte that is not zero after zeros
	// at the position (damage, or bytes being written), -1 if none.
	nonZeroAt int64
	// err says why the entry is not a valid batch that follows the one
	// before: an error matching log.ErrIncomplete or log.ErrCorrupt.
	err error
}

func (e logEntry) bad() bool { return e.err != nil || e.nonZeroAt >= 0 }

// entry reads the entry at pos of a file of size bytes whose batches must
// start at next or above and stay within reach of base; the error is an
// I/O error.
func (r *logReader) entry(pos, size, next, base int64) (logEntry, error) {
	e := logEntry{nonZeroAt: -1}
	hdr := make([]byte, min(int64(log.BatchHeaderSize), size-pos))
	if _, err := r.f.ReadAt(hdr, pos); err != nil && err != io.EOF {
		return e, err
	}
	if allZero(hdr) {
		at, err := r.nonZero(pos, size)
		e.zeros, e.nonZeroAt = at < 0, at
		return e, err
	}
	h, err := log.ReadHeader(hdr)
	if err == nil && int64(h.Size()) > size-pos {
		err = fmt.Errorf("batch needs %d bytes, %d remain: %w", h.Size(), size-pos, log.ErrIncomplete)
	}
	if err == nil {
		if cap(r.buf) < h.Size() {
			r.buf = make([]byte, h.Size())
		}
		r.buf = r.buf[:h.Size()]
		if _, rerr := r.f.ReadAt(r.buf, pos); rerr != nil && rerr != io.EOF {
			return e, rerr
		}
		_, err = log.CheckBatch(r.buf)
	}
	if err == nil && h.BaseOffset < next {
		err = log.Corruption(fmt.Sprintf("base offset %d is below the next offset %d", h.BaseOffset, next))
	}
	if err == nil && h.LastOffset()-base > math.MaxInt32 {
		err = log.Corruption(fmt.Sprintf("last offset %d is too far from the segment's base offset %d", h.LastOffset(), base))
	}
	e.h, e.err = h, err
	return e, nil
}

// settle reads the bad entry e at pos of a live directory's active
// segment again, at the file's new size, until it checks or
// segment.SettleWait has passed: the writer may be copying it into the
// file. A valid batch after it makes it damage at once, as for a
// read-only store (see segment.ValidAfter). It returns the last read and
// the file's size then.
func (r *logReader) settle(e logEntry, pos, size, next, base int64) (logEntry, int64, error) {
	if n := int64(e.h.Size()); e.err != nil && n > 0 {
		var after bool
		if after, r.buf = segment.ValidAfter(r.f, pos+n, size, r.buf); after {
			// Written before the batch after it: what it reads now is
			// final (the first read may have caught it being copied in).
			e, err := r.entry(pos, size, next, base)
			return e, size, err
		}
	}
	deadline := time.Now().Add(segment.SettleWait)
	for try := 0; time.Now().Before(deadline); try++ {
		if try < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(time.Millisecond)
		}
		var err error
		if size, err = r.f.Size(); err != nil {
			return logEntry{}, size, err
		}
		e, err := r.entry(pos, size, next, base)
		if err != nil || !e.bad() {
			return e, size, err
		}
	}
	e, err := r.entry(pos, size, next, base)
	return e, size, err
}

// nonZero returns the position of the first byte in [pos, size) that is
// not zero, -1 if there is none.
func (r *logReader) nonZero(pos, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for at := pos; at < size; at += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), size-at)]
		if _, err := r.f.ReadAt(b, at); err != nil && err != io.EOF {
			return -1, err
		}
		for i, c := range b {
			if c != 0 {
				return at + int64(i), nil
			}
		}
	}
	return -1, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// indexReport collects the bad entries of one index file.
type indexReport struct {
	v       *verifier
	path    string
	damage  bool
	fix     string
	entries int
}

func (r *indexReport) bad(pos int64, format string, args ...any) {
	r.entries++
	if r.entries <= maxFindingsPerFile {
		r.v.add(r.path, pos, r.damage, fmt.Sprintf(format, args...), r.fix)
	}
}

func (r *indexReport) finish() {
	if n := r.entries - maxFindingsPerFile; n > 0 {
		r.v.add(r.path, -1, r.damage, fmt.Sprintf("%d more bad entries", n), r.fix)
	}
}

// newIndexReport reads an index file and starts its report; ok is false
// when it is missing (a note if the segment should have one).
func (v *verifier) newIndexReport(s segCheck, suffix string, entrySize int, logBytes int64) ([]byte, *indexReport, bool) {
	path := filepath.Join(s.dir, segment.FileName(s.base, suffix))
	data, ok := v.readSmall(path)
	if !ok {
		if logBytes > segment.DefaultIndexIntervalBytes {
			v.add(path, -1, false, "missing", "Open rebuilds it from the log")
		}
		return nil, nil, false
	}
	r := &indexReport{v: v, path: path, damage: !s.unsettled,
		fix: "a recovery of the segment rebuilds it from the log (strata verify --repair)"}
	if s.unsettled {
		r.fix = "Open rebuilds it from the log"
	}
	if rem := len(data) % entrySize; rem != 0 {
		r.bad(int64(len(data)-rem), "size %d is not a multiple of the %d-byte entry", len(data), entrySize)
	}
	return data, r, true
}

// checkOffsetIndex checks a segment's .index against its batches: entries
// strictly increasing, each at the start of a batch, keyed by an offset
// that no batch before that position holds and the log reaches.
func (v *verifier) checkOffsetIndex(s segCheck, batches []batchInfo, logEnd int64) {
	data, r, ok := v.newIndexReport(s, segment.IndexSuffix, 8, logEnd)
	if !ok {
		return
	}
	defer r.finish()
	lastOff := s.base - 1
	if len(batches) > 0 {
		lastOff = batches[len(batches)-1].last
	}
	prevRel, prevPos := int64(-1), int64(-1)
	for i := 0; i+8 <= len(data); i += 8 {
		rel, pos := int64(binary.BigEndian.Uint32(data[i:])), int64(binary.BigEndian.Uint32(data[i+4:]))
		if i > 0 && rel == 0 && pos == 0 && s.unsettled {
			break // preallocated: the entries end here
		}
		if (s.cut || s.last && v.rep.Live) && pos >= logEnd {
			break // past the cut, or written after the log was read
		}
		off, at := s.base+rel, int64(i)
		switch j := sort.Search(len(batches), func(j int) bool { return batches[j].pos >= pos }); {
		case rel <= prevRel:
			r.bad(at, "entry %d: offset %d is not above the previous entry's %d", i/8, off, s.base+prevRel)
		case pos <= prevPos:
			r.bad(at, "entry %d: position %d is not above the previous entry's %d", i/8, pos, prevPos)
		case pos >= logEnd:
			r.bad(at, "entry %d: position %d is past the end of the log's %d valid bytes", i/8, pos, logEnd)
		case j == len(batches) || batches[j].pos != pos:
			r.bad(at, "entry %d: position %d is not the start of a batch", i/8, pos)
		case j > 0 && batches[j-1].last >= off:
			r.bad(at, "entry %d: offset %d is in the batch at position %d, before the entry's position %d", i/8, off, batches[j-1].pos, pos)
		case off > lastOff:
			r.bad(at, "entry %d: offset %d is past the log's last offset %d", i/8, off, lastOff)
		}
		prevRel, prevPos = rel, pos
	}
}

// checkTimeIndex checks a segment's .timeindex against its batches:
// timestamps strictly increasing, offsets not decreasing, each entry's
// timestamp the largest in the segment up to the batch holding its
// offset.
func (v *verifier) checkTimeIndex(s segCheck, batches []batchInfo) {
	var logEnd int64
	if n := len(batches); n > 0 {
		logEnd = batches[n-1].pos + 1
	}
	data, r, ok := v.newIndexReport(s, segment.TimeIndexSuffix, 12, logEnd)
	if !ok {
		return
	}
	defer r.finish()
	prevTS, prevRel := int64(math.MinInt64), int64(-1)
	for i := 0; i+12 <= len(data); i += 12 {
		ts, rel := int64(binary.BigEndian.Uint64(data[i:])), int64(binary.BigEndian.Uint32(data[i+8:]))
		if i > 0 && ts == 0 && rel == 0 && s.unsettled {
			break
		}
		off, at := s.base+rel, int64(i)
		j := sort.Search(len(batches), func(j int) bool { return batches[j].last >= off })
		if (s.cut || s.last && v.rep.Live) && j == len(batches) {
			break
		}
		switch {
		case ts <= prevTS:
			r.bad(at, "entry %d: timestamp %d is not above the previous entry's %d", i/12, ts, prevTS)
		case rel < prevRel:
			r.bad(at, "entry %d: offset %d is below the previous entry's %d", i/12, off, s.base+prevRel)
		case j == len(batches):
			r.bad(at, "entry %d: offset %d is not in the log", i/12, off)
		case batches[j].base > off:
			r.bad(at, "entry %d: offset %d is in no batch (the next starts at %d)", i/12, off, batches[j].base)
		case batches[j].maxTS != ts:
			r.bad(at, "entry %d: timestamp %d, but the largest timestamp up to offset %d is %d", i/12, ts, off, batches[j].maxTS)
		}
		prevTS, prevRel = ts, rel
	}
}
