package segment

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sync/atomic"

	"github.com/stratalog/strata/index"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// Defaults for Config's zero fields.
const (
	DefaultMaxBytes           = 1 << 30
	DefaultIndexIntervalBytes = 4096
	DefaultMaxIndexBytes      = index.DefaultMaxBytes
)

// MaxBytesLimit is the most a .log file can hold: index positions are int32.
const MaxBytesLimit = math.MaxInt32

// Config tunes a segment. The zero value means the defaults.
type Config struct {
	// MaxBytes is the most bytes the .log file of a writable segment may
	// hold: an append past it fails with ErrFull and the caller rolls. The
	// segment reserves this much address space (not memory) for its read
	// mapping. Default 1 GiB (Kafka's segment.bytes); at most MaxBytesLimit.
	MaxBytes int64
	// IndexIntervalBytes is the spacing of offset-index entries: a batch gets
	// an entry when more than this many bytes were written since the last
	// entry. Default 4096 (Kafka's index.interval.bytes).
	IndexIntervalBytes int
	// MaxIndexBytes is the most bytes each index file of a writable
	// segment may hold (what its mapping reserves); a segment whose index
	// fills up must roll. Default 10 MiB (Kafka's segment.index.bytes).
	MaxIndexBytes int
	// Preallocate reserves MaxBytes on disk for the .log file of a writable
	// segment (fallocate), as Kafka's preallocate does: appends then change
	// no file size. The file is trimmed to its batches when the segment is
	// sealed or closed; after a crash, recovery stops at the zeros. Where the file system cannot reserve
	// blocks (no fallocate, or outside Linux) it does nothing. Default false.
	Preallocate bool
	// WriteCalls makes every append write to the .log file with pwrite(2).
	// By default an append smaller than a page (4 KiB), other than the
	// segment's first, copies its bytes into the file's shared mapping (the
	// one reads use) instead, which costs no system call. On Linux every
	// append after the first writes zeros ahead of itself (64 KiB past the
	// batches, growing with the file up to 1 MiB; see ZeroFill), so such a
	// copy lands in written blocks; elsewhere the file is grown ahead of
	// them with fallocate, in steps of 64 KiB doubling up to 16 MiB. Either
	// way a copy never meets a full disk: pwrite is used where neither
	// zeros nor reserved blocks reach the append (no fallocate, or the disk
	// too full for the next step). Larger appends use pwrite, which is as
	// fast for them. Both leave the bytes in the OS page cache, where a
	// crash of the process cannot lose them, and fsync makes either
	// durable. The zeros or reserved bytes past the last batch are trimmed
	// when the segment is sealed or closed; after a crash, recovery stops
	// at them.
	WriteCalls bool
	// ZeroFill grows the .log file of a writable segment ahead of all its
	// appends, the first included, by writing zeros, in steps of 64 KiB
	// growing with the file up to 1 MiB, rather than by reserving blocks
	// (fallocate) or by the appends themselves; without it, on Linux, the
	// appends after the first do so anyway (see WriteCalls). An append into
	// bytes already written changes neither the file's size nor its
	// blocks, so the fsync that follows it (an fdatasync on Linux, see
	// SyncLog) has only data to write and no file-system journal to commit:
	// for a partition that syncs every append it is the faster way, at the
	// cost of writing each step's zeros once. The zeros past the last batch
	// are trimmed when the segment is sealed or closed, and recovery after
	// a crash stops at them, as with Preallocate. Default false.
	ZeroFill bool
	// AllowGaps lets a batch start past the previous batch's next offset, as
	// compacted segments and Kafka's transactions leave them (the partition
	// package sets it for every segment). Without it the offsets of a
	// segment must be dense: the first batch starts at the base offset and
	// each batch at the previous one's next offset, which also lets reads
	// catch a damaged base-offset field that moves it forward (the CRC does
	// not cover it); with it, only offsets that run backwards are caught.
	AllowGaps bool
	// listed, set by OpenListed for the open only, says whether a file of
	// the segment's directory is there, in place of a look at the
	// directory.
	listed func(name string) bool
}

func (c Config) withDefaults() Config {
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	c.MaxBytes = min(c.MaxBytes, MaxBytesLimit)
	if c.IndexIntervalBytes <= 0 {
		c.IndexIntervalBytes = DefaultIndexIntervalBytes
	}
	if c.MaxIndexBytes <= 0 {
		c.MaxIndexBytes = DefaultMaxIndexBytes
	}
	return c
}

// Segment is one .log file with its .index and .timeindex, and the
// .txnindex of the transactions aborted in it.
//
// One goroutine at a time may change a segment (Append, Seal, Recover,
// Sync, Close, Delete); the partition above serialises them. Any number of
// goroutines may read (Read, FindOffsetByTimestamp and the accessors) at the
// same time as the writer appends or seals, without a lock: the size and the
// next offset are published atomically after the bytes are written.
// Recover, Close and Delete must not run while a reader uses the segment;
// the partition reference-counts segments to ensure that.
type Segment struct {
	fsys    vfs.FS
	dir     string
	base    int64
	tmp     string // a temporary suffix of every file name ("" normally)
	cfg     Config
	path    string // the .log file
	log     vfs.File
	logSize int64 // the .log file's size when it was opened
	// zerosAhead says whether the appends after the first write zeros
	// ahead of themselves (see write): on the OS's files where zerosAhead
	// holds, never in memory, where zeros buy nothing and cost memory.
	zerosAhead bool
	data       []byte // a mapping of the .log file, len ≥ size; appends write past size (WriteMap)
	offsets    *index.Offset
	times      *index.Time
	txns       txnIndex // the aborted transactions whose markers the segment holds

	size  atomic.Int64 // bytes of whole batches in the .log file
	next  atomic.Int64 // the offset after the last batch
	maxTS atomic.Int64 // largest batch max timestamp, -1 if none
	// verified is the length of the file's prefix whose batches are known
	// good: written by this process, recovered, or CRC-checked by a read.
	// Reads check the CRC of batches past it only.
	verified atomic.Int64
	// tail is a stretch of known good batches after the verified
	// prefix: those appended since Open, and those a read checked just
	// below them.
	tail verifiedTail
	// marks are the other batches past the verified prefix already
	// CRC-checked.
	marks batchMarks
	// starts are record positions inside large batches, for lookups.
	starts startsTable
	// alike is the last run of alike batches appended, which lookups
	// find without the index.
	alike alikeRun

	// Writer state.
	// allocated is how far the .log file is known to reach (its blocks
	// reserved): appends up to it may copy into the mapping. It is never
	// above the file's size, which would make such a copy fault.
	allocated int64
	noReserve bool // the file system cannot reserve blocks: write calls only
	// released is how far the mapping's written pages have been released
	// (see releaseBehind).
	released int64
	// zeroed is how far the .log file holds written bytes (batches, or
	// the zeros of ZeroFill): appends below it allocate nothing. Never
	// above the file's size.
	zeroed        int64
	offsetOfMaxTS int64 // last offset of the first batch that reached maxTS
	firstTS       int64 // max timestamp of the first batch, -1 if none
	sinceIndex    int64 // bytes written since the last offset-index entry
	writable      bool
	sealed        bool
	closed        bool
	marked        bool  // MarkDeleted renamed the files: the live names are not ours
	indexDirDirty bool  // index files were created and their directory not synced yet
	damaged       error // the first damaged batch load found, for Damaged

	// Follower state (see OpenFollow).
	follower  bool                      // opened by OpenFollow: never writes
	untrusted bool                      // a follower that scans its log (Extend) and keeps its indexes in memory
	heap      bool                      // data is a copy in memory, not a mapping
	full      bool                      // Extend found no room for more
	scratch   []byte                    // Extend's buffer
	hdr       [log.BatchHeaderSize]byte // Extend's header buffer (a local one would escape)
	settle    Unsettled                 // Extend's bad bytes after the last batch, from one look to the next
	tailErr   atomic.Pointer[error]     // the damage Extend's last look found there (TailDamage)
	final     atomic.Bool               // a later segment exists (SetFinal)
	holes     []hole                    // damaged stretches load stepped over; set by Open only
}

// Create makes a new, empty, writable segment with base offset base in dir,
// replacing any stale files of that name, and syncs the directory so the new
// files survive a crash. A failure removes what it created (as far as it
// can: a later Create of the base replaces leftovers anyway); a failed
// directory fsync is ErrSync.
func Create(fsys vfs.FS, dir string, base int64, cfg Config) (*Segment, error) {
	if base < 0 {
		return nil, fmt.Errorf("segment: base offset %d is negative: %w", base, ErrInvalidBatch)
	}
	if err := RemoveFiles(fsys, dir, base, ""); err != nil {
		return nil, err
	}
	return create(fsys, dir, base, cfg)
}

// CreateNew is Create for a directory that the caller has just listed
// and found without any file of the segment: it removes nothing first. A
// .log that is there after all fails it (os.ErrExist), and changes
// nothing.
func CreateNew(fsys vfs.FS, dir string, base int64, cfg Config) (*Segment, error) {
	if base < 0 {
		return nil, fmt.Errorf("segment: base offset %d is negative: %w", base, ErrInvalidBatch)
	}
	return create(fsys, dir, base, cfg)
}

// create is Create once no file of the segment is left.
func create(fsys vfs.FS, dir string, base int64, cfg Config) (*Segment, error) {
	s, err := open(fsys, dir, base, cfg, true, true)
	if errors.Is(err, os.ErrExist) {
		return nil, err // not ours to remove
	}
	if err == nil {
		err = s.preallocate()
		if err == nil {
			if serr := fsys.SyncDir(dir); serr != nil {
				err = fmt.Errorf("segment: syncing directory %s: %w: %w", dir, ErrSync, serr)
			}
		}
		if err != nil {
			s.closeFiles()
		}
	}
	if err != nil {
		_ = RemoveFiles(fsys, dir, base, "")
		return nil, err
	}
	return s, nil
}

// preallocate reserves MaxBytes for a writable segment's .log when the
// configuration asks for it.
func (s *Segment) preallocate() error {
	if !s.cfg.Preallocate || !s.writable || s.sealed {
		return nil
	}
	err := s.log.Allocate(int64(len(s.data)))
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		s.noReserve = true // an optimisation the file system does not offer
		return nil
	case err != nil:
		return fmt.Errorf("segment: preallocating %s: %w", s.path, err)
	}
	s.allocated = int64(len(s.data))
	return nil
}

// Open opens an existing segment. Its files are trusted as a clean shutdown
// left them: the indexes are checked for shape only (a size that is a whole
// number of entries, offsets that rise at the ends). Open scans the batch
// headers after the offset index's last entry for the next offset; a batch
// there that would raise the max timestamp is CRC-checked first, and a
// damaged one raises nothing (see Damaged). A segment that may have been
// written when the process crashed must be opened writable and then
// recovered with Recover, which rebuilds the indexes from the log.
//
// A missing index file is ErrCorrupt (wrapping fs.ErrNotExist too), not an
// empty index: OpenRecover rebuilds it, as Kafka recovers a segment whose
// index is missing.
//
// A writable segment takes appends (its indexes are mapped with room for
// MaxIndexBytes again); a read-only one is sealed.
func Open(fsys vfs.FS, dir string, base int64, cfg Config, writable bool) (*Segment, error) {
	return openListed(fsys, dir, base, cfg, writable)
}

// OpenListed is Open for a caller that has just listed dir, and that no
// other writer changes: listed reports whether a name was in the listing,
// and Open asks it, rather than the file system, whether the segment's
// optional files (its index files, its .txnindex) are there.
func OpenListed(fsys vfs.FS, dir string, base int64, cfg Config, writable bool, listed func(name string) bool) (*Segment, error) {
	cfg.listed = listed
	return openListed(fsys, dir, base, cfg, writable)
}

func openListed(fsys vfs.FS, dir string, base int64, cfg Config, writable bool) (*Segment, error) {
	// Index files that are not there are missing if the .log is larger
	// than a segment without them can be, or is not there: its size is
	// the open's.
	absent := absentIndexes(fsys, dir, base, cfg.listed)
	missing := func() error {
		return fmt.Errorf("%w: index file %s is missing: %w", ErrCorrupt, absent[0], os.ErrNotExist)
	}
	s, err := open(fsys, dir, base, cfg, writable, false)
	if err != nil {
		if len(absent) > 0 {
			return nil, missing()
		}
		return nil, err
	}
	if len(absent) > 0 && s.logSize > int64(s.cfg.IndexIntervalBytes) {
		s.closeFiles()
		return nil, missing()
	}
	err = s.txns.damage
	if err == nil {
		err = s.loadSized(s.logSize) // the file just opened: nobody else writes it
	}
	if err == nil {
		err = s.preallocate()
	}
	if err != nil {
		s.closeFiles()
		return nil, err
	}
	s.cfg.listed = nil // the listing is the open's only
	return s, nil
}

func open(fsys vfs.FS, dir string, base int64, cfg Config, writable, create bool) (*Segment, error) {
	return openNamed(fsys, dir, base, "", cfg, writable, create)
}

// openNamed is open for files whose names carry a temporary suffix (such as
// SwapSuffix) after their usual one.
func openNamed(fsys vfs.FS, dir string, base int64, tmp string, cfg Config, writable, create bool) (*Segment, error) {
	cfg = cfg.withDefaults()
	s := &Segment{
		fsys:     fsys,
		dir:      dir,
		base:     base,
		tmp:      tmp,
		cfg:      cfg,
		writable: writable,
		sealed:   !writable,
		firstTS:  -1,
	}
	s.zerosAhead = zerosAhead && vfs.IsOS(fsys)
	s.path = s.filePath(LogSuffix)
	s.next.Store(base)
	s.maxTS.Store(-1)
	s.offsetOfMaxTS = base
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE | os.O_EXCL
	}
	var err error
	if s.log, err = fsys.OpenFile(s.path, flag, 0o644); err != nil {
		return nil, fmt.Errorf("segment: opening %s: %w", s.path, err)
	}
	// Reads go through a mapping of the .log file; a writable segment's
	// mapping reserves room for the file to grow to MaxBytes. A file just
	// made (O_EXCL) is empty.
	var fileSize int64
	if !create {
		if fileSize, err = s.log.Size(); err != nil {
			s.closeFiles()
			return nil, fmt.Errorf("segment: %s: %w", s.path, err)
		}
	}
	s.logSize = fileSize
	if fileSize > MaxBytesLimit {
		s.closeFiles()
		return nil, corruptAt(s.path, MaxBytesLimit, fmt.Errorf("file of %d bytes is larger than a segment can be", fileSize))
	}
	mapLen := fileSize
	if writable {
		mapLen = max(fileSize, cfg.MaxBytes)
	}
	if s.data, err = s.log.Map(int(mapLen)); err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("segment: mapping %s: %w", s.path, err)
	}
	if err = s.openIndexes(create); err == nil {
		err = s.openTxnIndex(create)
	}
	if err != nil {
		s.closeFiles()
		return nil, err
	}
	return s, nil
}

// indexError makes a damaged index file ErrCorrupt too, so the caller can
// tell "recover this segment" from an I/O failure with one errors.Is.
func indexError(err error) error {
	if errors.Is(err, index.ErrCorrupt) {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return err
}

// fileKinds are the suffixes of a segment's files.
var fileKinds = []string{LogSuffix, IndexSuffix, TimeIndexSuffix, TxnIndexSuffix}

// filePath returns the path of the segment's file of the given kind (one
// of fileKinds) under the name the segment was opened with: its temporary
// suffix, if any, included.
func (s *Segment) filePath(kind string) string {
	return filePathIn(s.dir, s.base, kind, s.tmp)
}

// Base returns the segment's base offset: the offset its file name carries,
// at or below its first record's offset.
func (s *Segment) Base() int64 { return s.base }

// NextOffset returns the offset after the segment's last batch.
func (s *Segment) NextOffset() int64 { return s.next.Load() }

// Size returns the number of bytes of whole batches in the .log file.
func (s *Segment) Size() int64 { return s.size.Load() }

// MaxTimestamp returns the largest batch max timestamp (ms) in the segment,
// or -1 if it holds no batch.
func (s *Segment) MaxTimestamp() int64 { return s.maxTS.Load() }

// FirstBatchTimestamp returns the max timestamp of the segment's first batch,
// or -1 if it holds none: the time from which Kafka measures a segment's age
// for rolling.
func (s *Segment) FirstBatchTimestamp() int64 { return s.firstTS }

// Path returns the path of the segment's .log file.
func (s *Segment) Path() string { return s.path }

// Sealed reports whether the segment no longer takes appends.
func (s *Segment) Sealed() bool { return s.sealed }

// IndexFull reports whether either index has no room for another entry, so
// the segment must roll before the next append.
func (s *Segment) IndexFull() bool { return s.offsets.Full() || s.times.Full() }

// CanAppendOffset reports whether a batch whose last offset is lastOffset
// fits this segment's relative offsets (lastOffset − base ≤ MaxInt32).
func (s *Segment) CanAppendOffset(lastOffset int64) bool {
	return lastOffset >= s.base && lastOffset-s.base <= math.MaxInt32
}

// IndexEntries returns the number of entries in the offset index and in the
// time index.
func (s *Segment) IndexEntries() (offsets, times int) {
	return s.offsets.Entries(), s.times.Entries()
}

// Sync makes everything appended so far durable: the .log file (fsync) and
// both indexes. A failure is ErrSync.
func (s *Segment) Sync() error {
	if s.closed {
		return ErrClosed
	}
	if s.follower {
		return nil
	}
	if err := s.SyncLog(); err != nil {
		return err
	}
	if err := s.offsets.Sync(); err != nil {
		return fmt.Errorf("segment: %w: %w", ErrSync, err)
	}
	if err := s.times.Sync(); err != nil {
		return fmt.Errorf("segment: %w: %w", ErrSync, err)
	}
	return s.SyncTxnIndex()
}

// Seal ends appends: it writes the final time-index entry and trims both
// indexes to their valid size. Readers may keep reading. Seal does not sync;
// call Sync after it to make the sealed state durable.
func (s *Segment) Seal() error {
	if s.closed {
		return ErrClosed
	}
	if s.sealed || s.follower {
		return nil
	}
	if err := s.finalTimeEntry(); err != nil {
		return err
	}
	if err := s.offsets.Trim(); err != nil {
		return err
	}
	if err := s.times.Trim(); err != nil {
		return err
	}
	if err := s.trimLog(); err != nil {
		return err
	}
	s.allocated = s.size.Load()
	s.zeroed = s.allocated
	s.sealed = true
	return nil
}

// trimLog cuts the .log file to its batches: the zeros or reserved bytes
// past them, and bytes anyone else appended. A file that has the size
// already (fstat says so) is left alone: a truncate to the same size is
// not free, ext4 zeroing the tail of its last page and unmapping that page
// from every mapping.
func (s *Segment) trimLog() error {
	size := s.size.Load()
	if now, err := s.log.Size(); err == nil && now == size {
		return nil
	}
	if err := s.log.Truncate(size); err != nil {
		return fmt.Errorf("segment: trimming %s: %w", s.path, err)
	}
	return nil
}

// finalTimeEntry records the segment's max timestamp in the time index,
// using the slot reserved for it (in the index, and on disk since Append),
// so that a reopened segment knows it.
func (s *Segment) finalTimeEntry() error {
	if !s.times.OnDisk() {
		return nil // a segment without index files; see lazyLimit
	}
	if ts := s.maxTS.Load(); ts >= 0 {
		return s.times.MaybeAppend(ts, s.offsetOfMaxTS, true)
	}
	return nil
}

// Close seals a writable segment's indexes (as Seal does), releases the
// memory mappings and closes the files. It must not run while a reader uses
// the segment. Closing twice is a no-op.
func (s *Segment) Close() error {
	if s.closed {
		return nil
	}
	err := s.Seal()
	s.closeFiles()
	s.closed = true
	return err
}

// closeFiles closes whatever is open, ignoring errors: the files were synced
// or are being abandoned.
func (s *Segment) closeFiles() {
	s.closeTxns()
	if s.times != nil {
		_ = s.times.Close()
	}
	if s.offsets != nil {
		_ = s.offsets.Close()
	}
	if s.log != nil {
		if !s.heap {
			_ = s.log.Unmap(s.data)
		}
		_ = s.log.Close()
	}
}

// MarkDeleted renames the segment's files, under the names it was opened
// with, to those names followed by .deleted: the first step of removing a
// segment, after which a crash leaves files that Open of the partition
// removes. Open files keep working. The caller syncs the directory.
func (s *Segment) MarkDeleted() error {
	if s.marked || s.follower {
		return nil
	}
	for _, kind := range fileKinds {
		if kind == IndexSuffix && !s.offsets.OnDisk() || kind == TimeIndexSuffix && !s.times.OnDisk() ||
			kind == TxnIndexSuffix && s.txns.file == nil {
			continue // never created; see lazyLimit and txnIndex
		}
		from := s.filePath(kind)
		if err := s.fsys.Rename(from, from+DeletedSuffix); err != nil {
			return fmt.Errorf("segment: renaming %s: %w", from, err)
		}
	}
	s.marked = true
	return nil
}

// Delete closes the segment and removes its files: renamed to .deleted first
// (see MarkDeleted), unless that was done already, then unlinked. It must not
// run while a reader uses the segment.
func (s *Segment) Delete() error {
	if s.follower {
		// The owner's files: a follower only lets go of them.
		s.closeFiles()
		s.closed = true
		return nil
	}
	// Only names this segment renamed are touched: by the time the last
	// reader lets go, a new segment may live under the old names.
	if err := s.MarkDeleted(); err != nil {
		return err
	}
	s.closeFiles()
	s.closed = true
	for _, kind := range fileKinds {
		name := s.filePath(kind) + DeletedSuffix
		if err := s.fsys.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("segment: removing %s: %w", name, err)
		}
	}
	return nil
}

// headerAt decodes the header of the batch at pos and checks that the batch
// ends by end.
func (s *Segment) headerAt(pos, end int64) (log.BatchHeader, error) {
	var h log.BatchHeader
	err := s.headerInto(pos, end, &h)
	return h, err
}

// headerInto is headerAt decoding into *h.
func (s *Segment) headerInto(pos, end int64, h *log.BatchHeader) error {
	if end-pos < log.PrefixSize {
		*h = log.BatchHeader{}
		return corruptAt(s.path, pos, fmt.Errorf("a batch header runs past the end at %d: %w", end, log.ErrIncomplete))
	}
	if err := log.ReadHeaderInto(s.data[pos:end], h); err != nil {
		return corruptAt(s.path, pos, err)
	}
	if pos+int64(h.Size()) > end {
		return corruptAt(s.path, pos, fmt.Errorf("batch of %d bytes runs past the end at %d: %w", h.Size(), end, log.ErrIncomplete))
	}
	return nil
}

// SyncLog makes the .log file's contents and size durable without
// touching the indexes: vfs.SyncData, fdatasync on Linux (the file's
// timestamps are left to the kernel), fsync elsewhere. It is safe to call
// while another goroutine appends: what was appended before the call is
// durable when it returns. The partition uses it for group commit; the
// active segment's indexes are rebuilt by recovery. A failure is ErrSync.
func (s *Segment) SyncLog() error {
	if s.follower {
		return nil
	}
	if err := vfs.SyncData(s.log); err != nil {
		return fmt.Errorf("segment: syncing %s: %w: %w", s.path, ErrSync, err)
	}
	return nil
}
