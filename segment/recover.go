package segment

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/stratalog/strata/index"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// Recovery reports what Recover found.
type Recovery struct {
	// Batches and Bytes count the valid batches kept.
	Batches int
	Bytes   int64
	// Truncated is the number of bytes cut off the end of the file, zeros
	// that preallocation left not counted.
	Truncated int64
	// ZeroTail is the number of zero bytes after the last batch: what
	// preallocation reserved and no append used. They are cut too.
	ZeroTail int64
	// Reason says why the bytes were cut: an error wrapping log.ErrIncomplete
	// for a torn tail, or ErrCorrupt (with file and position) for damage. Nil
	// when nothing was cut.
	Reason error
	// Recreated lists the index files OpenRecover created anew, and filled
	// from the log: those that were missing, and those too damaged to open
	// (larger than an index can be), unless the recovered log is small
	// enough to need none (see Config.IndexIntervalBytes). The caller syncs
	// the directory.
	Recreated []string
}

// Recover rebuilds a writable segment's state from its .log file after a
// crash: it checks every batch from the start (header rules, CRC-32C, offsets
// that follow one another), cuts the file at the first batch that is torn or
// damaged, and rebuilds both indexes from the valid batches, so that no
// index written before the crash is trusted. The segment stays writable.
func (s *Segment) Recover() (Recovery, error) {
	var rec Recovery
	switch {
	case s.closed:
		return rec, ErrClosed
	case !s.writable:
		return rec, fmt.Errorf("segment: recovering read-only %s: %w", s.path, ErrSealed)
	}
	fileSize, err := s.log.Size()
	if err != nil {
		return rec, fmt.Errorf("segment: %s: %w", s.path, err)
	}
	fileSize = min(fileSize, int64(len(s.data))) // the mapping covers the file as opened
	s.offsets.Reset()
	s.times.Reset()
	s.sinceIndex, s.firstTS, s.offsetOfMaxTS = 0, -1, s.base
	s.maxTS.Store(-1)

	next := s.base
	var valid int64
	for valid < fileSize {
		if firstNonZero(s.data[valid:min(fileSize, valid+log.BatchHeaderSize)]) < 0 {
			// No batch starts with zeros (its length is at least 49):
			// these are what growing the file ahead of appends left. If
			// bytes follow them (pages written back out of order before a
			// power cut, or damage), they are cut as damage, and said so.
			if nz := firstNonZero(s.data[valid:fileSize]); nz >= 0 {
				rec.Reason = corruptAt(s.path, valid+int64(nz), fmt.Errorf("bytes after zeros that start at %d", valid))
			} else {
				rec.ZeroTail = fileSize - valid
			}
			break
		}
		h, err := s.headerAt(valid, fileSize)
		if err == nil {
			_, err = log.CheckBatch(s.data[valid : valid+int64(h.Size())])
			if err != nil {
				err = corruptAt(s.path, valid, err)
			}
		}
		if err == nil {
			err = s.checkFollows(h.BaseOffset, next, valid)
		}
		if err == nil && !s.CanAppendOffset(h.LastOffset()) {
			err = corruptAt(s.path, valid, fmt.Errorf("last offset %d too far from the base offset", h.LastOffset()))
		}
		if err != nil {
			rec.Reason = err
			break
		}
		s.indexBatch(&h, valid)
		next = h.NextOffset()
		valid += int64(h.Size())
		rec.Batches++
	}

	rec.Bytes = valid
	rec.Truncated = fileSize - valid - rec.ZeroTail
	s.allocated = min(s.allocated, valid) // what holds if the truncation fails
	s.zeroed = min(s.zeroed, valid)
	if valid < fileSize {
		if err := s.log.Truncate(valid); err != nil {
			return rec, fmt.Errorf("segment: truncating %s to %d: %w", s.path, valid, err)
		}
	}
	s.allocated, s.zeroed = valid, valid
	if err := s.needIndexes(valid); err != nil {
		return rec, err
	}
	if err := s.truncateTxns(next); err != nil {
		return rec, err
	}
	s.marks.reset()
	s.starts.reset()
	s.alike.reset()
	s.verified.Store(valid)
	s.tail.reset(valid)
	s.size.Store(valid)
	s.next.Store(next)
	s.sealed = false
	return rec, nil
}

// OpenRecover opens a segment that may have been written when the process
// crashed, writable, and recovers it (see Recover): nothing in its index
// files is trusted, and an index file that is missing or too damaged to
// open is created anew (see Recovery.Recreated).
func OpenRecover(fsys vfs.FS, dir string, base int64, cfg Config) (*Segment, Recovery, error) {
	recreated := absentIndexes(fsys, dir, base, nil)
	s, err := open(fsys, dir, base, cfg, true, false)
	for range 2 { // each index file at most once
		var bad *index.CorruptError
		if !errors.As(err, &bad) {
			break
		}
		if rerr := fsys.Remove(bad.Path); rerr != nil {
			return nil, Recovery{}, fmt.Errorf("segment: removing damaged %s: %w", bad.Path, rerr)
		}
		recreated = append(recreated, bad.Path)
		s, err = open(fsys, dir, base, cfg, true, false)
	}
	if err != nil {
		return nil, Recovery{}, err
	}
	rec, err := s.Recover()
	rec.Recreated = s.onDisk(recreated)
	if err == nil {
		err = s.preallocate()
	}
	if err != nil {
		s.closeFiles()
		return nil, rec, err
	}
	return s, rec, nil
}

// zeroPage is a page of zeros to compare with.
var zeroPage [4096]byte

// firstNonZero returns the index of the first byte of b that is not zero,
// or -1 if there is none.
func firstNonZero(b []byte) int {
	for p := 0; p < len(b); p += len(zeroPage) {
		page := b[p:min(len(b), p+len(zeroPage))]
		if bytes.Equal(page, zeroPage[:len(page)]) {
			continue
		}
		for i, c := range page {
			if c != 0 {
				return p + i
			}
		}
	}
	return -1
}
