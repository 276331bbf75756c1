package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"

	"github.com/stratalog/strata/index"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// A follower segment is one that a process reads while another owns the
// directory and may be writing it (package strata's Options.ReadOnly). It
// never writes, creates, truncates or renames a file. Its hazards are the
// owner's: the active segment's .log grows (ahead of its batches too, with
// reserved zeros), is trimmed when the segment is sealed, and is cut back to
// its last valid batch by the recovery of the owner's next Open after a
// crash; its index files are reserved ahead of their entries, written
// behind the log and trimmed. So a follower
//
//   - reads the .log through a read-only mapping (or, where the file system
//     cannot map so, a copy in memory) but touches only the bytes of batches
//     it has checked, found with pread: recovery never cuts below a batch
//     that passes its checks (the checks are recovery's), a seal trims
//     only what follows the last batch, and the cleanup of a failed append
//     cuts only that append's bytes, a partial batch (the partition
//     appends one batch per write); retention, compaction, truncation and
//     topic deletion remove or replace files, which stay whole under a
//     mapping. The one cut that can reach checked bytes is the repair of
//     damage that an owner's Open finds in a segment it trusts, which a
//     trusted follower maps as it was;
//   - tells a batch being copied in, or a torn tail, from damage after its
//     last valid batch (see Unsettled and TailDamage);
//   - trusts no index file of a segment that may still be written
//     (untrusted): it scans the log instead, as recovery does, stopping at
//     the first torn or damaged batch without cutting anything, and builds
//     its indexes in memory; Extend goes on from there when the owner has
//     appended;
//   - copies the index files of a trusted segment (sealed and synced long
//     ago: below the partition's recovery point) into memory, and loads it
//     as Open does.

// followHeapSlack is how far past the file's size a follower's in-memory
// copy of an untrusted .log has room to grow before it must be opened again.
const followHeapSlack = 1 << 20

// OpenFollow opens the segment at base read-only for a follower: see the
// comment above. trusted says the segment is sealed and its files final (a
// clean owner's segment below the recovery point); an untrusted one is
// scanned, batch by batch with every CRC checked, and ends at its last
// valid batch. A follower segment takes no appends (ErrSealed); Close and
// Delete close its files and remove nothing (the owner removes them).
func OpenFollow(fsys vfs.FS, dir string, base int64, cfg Config, trusted bool) (*Segment, error) {
	cfg = cfg.withDefaults()
	s := &Segment{
		fsys:     fsys,
		dir:      dir,
		base:     base,
		cfg:      cfg,
		sealed:   true,
		follower: true,
		firstTS:  -1,
	}
	s.path = s.filePath(LogSuffix)
	s.next.Store(base)
	s.maxTS.Store(-1)
	s.offsetOfMaxTS = base
	var err error
	if s.log, err = fsys.OpenFile(s.path, os.O_RDONLY, 0); err != nil {
		return nil, fmt.Errorf("segment: opening %s: %w", s.path, err)
	}
	fileSize, err := s.log.Size()
	if err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("segment: %s: %w", s.path, err)
	}
	if fileSize > MaxBytesLimit {
		s.closeFiles()
		return nil, corruptAt(s.path, MaxBytesLimit, fmt.Errorf("file of %d bytes is larger than a segment can be", fileSize))
	}
	mapLen := fileSize
	if !trusted {
		// Room to follow the file as it grows, even past a segment.bytes
		// the owner raised since (then this segment is opened again
		// when it is full, each time with twice the room).
		mapLen = min(max(2*fileSize, cfg.MaxBytes), MaxBytesLimit)
	}
	if err := s.followMap(fileSize, mapLen); err != nil {
		s.closeFiles()
		return nil, err
	}
	if trusted {
		err = s.loadFollowIndexes()
		if err == nil {
			err = s.openTxnIndex(false)
		}
		if err == nil {
			err = s.txns.damage
		}
		if err == nil {
			err = s.load()
		}
		if err == nil {
			s.verified.Store(0)
		}
	} else {
		err = s.scanFollow(fileSize)
	}
	if err != nil {
		s.closeFiles()
		return nil, err
	}
	return s, nil
}

// followMap maps the first mapLen bytes of the .log read-only, or, where
// the file cannot be mapped so, copies its fileSize bytes into memory with
// room to grow.
func (s *Segment) followMap(fileSize, mapLen int64) error {
	m, err := vfs.MapReadOnly(s.log, int(mapLen))
	if err == nil {
		s.data = m
		return nil
	}
	if !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("segment: mapping %s: %w", s.path, err)
	}
	n := fileSize
	if mapLen > fileSize {
		n = min(mapLen, fileSize*2+followHeapSlack)
	}
	s.data = make([]byte, n)
	s.heap = true
	if fileSize == 0 {
		return nil
	}
	k, err := s.log.ReadAt(s.data[:fileSize], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("segment: reading %s: %w", s.path, err)
	}
	clear(s.data[k:])
	return nil
}

// loadFollowIndexes reads the index files of a trusted follower segment
// into memory; a missing one is an empty index (a segment small enough to
// have none; see lazyLimit).
func (s *Segment) loadFollowIndexes() error {
	opath, tpath := s.filePath(IndexSuffix), s.filePath(TimeIndexSuffix)
	var err error
	if s.offsets, err = index.LoadOffset(s.fsys, opath, s.base); errors.Is(err, os.ErrNotExist) {
		s.offsets, err = index.DeferOffset(s.fsys, opath, s.base, 0, false)
	}
	if err != nil {
		return indexError(err)
	}
	if s.times, err = index.LoadTime(s.fsys, tpath, s.base); errors.Is(err, os.ErrNotExist) {
		s.times, err = index.DeferTime(s.fsys, tpath, s.base, 0, false)
	}
	return indexError(err)
}

// scanFollow builds an untrusted follower segment's state from its log:
// in-memory indexes with room for what fileSize bytes need and as much
// again, filled by Extend.
func (s *Segment) scanFollow(fileSize int64) error {
	entries := int(2*fileSize/int64(s.cfg.IndexIntervalBytes)) + 64
	var err error
	if s.offsets, err = index.NewMemOffset(s.filePath(IndexSuffix), s.base, entries); err != nil {
		return err
	}
	if s.times, err = index.NewMemTime(s.filePath(TimeIndexSuffix), s.base, entries); err != nil {
		return err
	}
	if err := s.openTxnIndex(false); err != nil {
		return err
	}
	s.untrusted = true
	_, err = s.Extend()
	return err
}

// Extend adds to an untrusted follower segment the batches the owner has
// appended since it last looked: it reads on from the segment's end with
// pread, and takes each batch whose header reads, whose CRC holds, whose
// offsets follow and fit the segment, as recovery does, stopping without an
// error at the first that does not (a batch being written, zeros the
// owner reserved, the end of the file, or damage). The batches taken are
// published to readers as appends are. It reports whether the segment
// grew. One goroutine at a time may call it; readers may read meanwhile.
//
// Full reports whether the segment ran out of room for what the file may
// hold (its mapping, or its in-memory indexes): the caller opens it again
// with OpenFollow to see further. A trusted follower segment, or one that is
// not a follower, does not grow.
func (s *Segment) Extend() (grew bool, err error) {
	if !s.untrusted || s.closed {
		return false, nil
	}
	pos, next := s.size.Load(), s.next.Load()
	hdr := s.hdr[:]
	var bad error // why the bytes at pos are not the next batch, if they are there and not zeros
	var badBytes []byte
	var badSpan, badEnd int64 = 0, -1
	for {
		if pos+log.PrefixSize > int64(len(s.data)) {
			s.full = true
			break
		}
		n, err := s.log.ReadAt(hdr, pos)
		if err != nil && !errors.Is(err, io.EOF) {
			return grew, fmt.Errorf("segment: reading %s at %d: %w", s.path, pos, err)
		}
		if n < log.PrefixSize || firstNonZero(hdr[:n]) < 0 {
			break
		}
		h, err := log.ReadHeader(hdr[:n])
		if err != nil {
			bad, badBytes, badSpan = err, hdr[:n], int64(n)
			if errors.Is(err, log.ErrIncomplete) {
				badBytes = nil // a header the file ends in: torn
			}
			if l := int64(int32(binary.BigEndian.Uint32(hdr[8:12]))); l > 0 {
				badEnd = pos + 12 + l // (base offset, length, then length bytes) where the length, if it is right, says the next batch is
			}
			break
		}
		size := int64(h.Size())
		end := pos + size
		if end > int64(len(s.data)) {
			s.full = true
			break
		}
		if cap(s.scratch) < int(size) {
			s.scratch = make([]byte, size)
		}
		b := s.scratch[:size]
		if k, err := s.log.ReadAt(b, pos); k < len(b) {
			if err != nil && !errors.Is(err, io.EOF) {
				return grew, fmt.Errorf("segment: reading %s at %d: %w", s.path, pos, err)
			}
			// Torn (no bytes make it otherwise): the rest of a batch
			// being written, or of one a crashed owner left, which its
			// next Open cuts.
			bad, badBytes = fmt.Errorf("batch of %d bytes, %d in the file: %w", len(b), k, log.ErrIncomplete), nil
			break
		}
		if _, err := log.CheckBatch(b); err != nil {
			bad, badBytes, badSpan, badEnd = err, b, size, end
			break
		}
		if err := s.follows(h.BaseOffset, next); err != nil {
			bad, badBytes, badSpan, badEnd = err, b, size, end
			break
		}
		if !s.CanAppendOffset(h.LastOffset()) {
			bad, badBytes, badSpan, badEnd = fmt.Errorf("last offset %d too far from the base offset", h.LastOffset()), b, size, end
			break
		}
		if s.offsets.Full() || s.times.Full() {
			s.full = true
			break
		}
		if s.heap {
			copy(s.data[pos:end], b)
		}
		s.indexBatch(&h, pos)
		next = h.NextOffset()
		pos = end
		s.verified.Store(end)
		s.size.Store(end)
		s.next.Store(next)
		grew = true
	}
	s.judgeTail(pos, bad, badBytes, badSpan, badEnd)
	if cap(s.scratch) > 1<<20 {
		s.scratch = nil // a large batch's buffer is not kept
	}
	return grew, nil
}

// judgeTail decides whether the bad bytes Extend stopped at, at pos, are
// damage (see Unsettled and ValidAfter; a final segment's are at once),
// and records the answer for TailDamage. bad is nil when Extend stopped
// at zeros, the end of the file or a full segment; b is the bad bytes
// (nil for a batch that reaches past the end of the file, torn), span how
// far they reach, end where the bad batch ends by its header (-1 if that
// is not known).
func (s *Segment) judgeTail(pos int64, bad error, b []byte, span, end int64) {
	if bad == nil {
		s.settle.Reset()
		s.tailErr.Store(nil)
		return
	}
	torn := Torn(b)
	damage := s.final.Load()
	if torn {
		s.settle.Reset()
	} else if s.settle.Settled(pos, b, span, time.Now()) {
		damage = true
	}
	if !damage && end > pos {
		sum := crc32.Checksum(b, settleTable) // b may be s.scratch, which ValidAfter reuses
		if size, err := s.log.Size(); err == nil {
			damage, s.scratch = ValidAfter(s.log, end, size, s.scratch)
		}
		if damage {
			// The batch after was written after these bytes were read:
			// they are damage only if they still read the same (the read
			// may have caught the owner copying them in).
			if cap(s.scratch) < int(span) {
				s.scratch = make([]byte, span)
			}
			again := s.scratch[:span]
			k, _ := s.log.ReadAt(again, pos)
			damage = int64(k) == span && crc32.Checksum(again, settleTable) == sum
		}
	}
	if !damage {
		s.tailErr.Store(nil)
		return
	}
	err := corruptAt(s.path, pos, bad)
	s.tailErr.Store(&err)
}

// TailDamage returns the damage an untrusted follower segment's last look
// (Extend) found after its last valid batch: an error matching ErrCorrupt
// with the file and position, nil if none is known. Bad bytes there are
// damage once a valid batch follows them, once they read the same for
// SettleWait, or at once in a segment SetFinal marked (see Unsettled); they
// stop being so when they change (the next owner's recovery cut them).
func (s *Segment) TailDamage() error {
	if e := s.tailErr.Load(); e != nil {
		return *e
	}
	return nil
}

// SetFinal tells an untrusted follower segment that a later segment
// exists: its owner writes no more to it, so bad bytes after its last
// valid batch are damage at once. Extend judges them again.
func (s *Segment) SetFinal() {
	if s.untrusted && !s.final.Swap(true) && !s.closed {
		_, _ = s.Extend()
	}
}

// Full reports whether an untrusted follower segment has no room to grow
// (see Extend).
func (s *Segment) Full() bool { return s.full }

// SameFile reports whether the segment's open .log is still the file its
// name names (see vfs.SameFile), and whether that can be told.
func (s *Segment) SameFile() (same, known bool) {
	return vfs.SameFile(s.fsys, s.log, s.path)
}
