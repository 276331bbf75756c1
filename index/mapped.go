package index

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"sync/atomic"

	"github.com/stratalog/strata/vfs"
)

// DefaultMaxBytes is the default size of a writable index file, Kafka's
// segment.index.bytes (10 MiB): 1,310,720 offset entries or 873,813 time
// entries.
const DefaultMaxBytes = 10 << 20

// mapped is a memory-mapped file of fixed-size entries, the plumbing that the
// offset and the time index share: open, extend, map, publish, trim, sync and
// close.
//
// The entry count is the only thing readers and the writer share: the writer
// writes an entry's bytes into data and then stores the new count; a reader
// loads the count and reads only that many entries. data is set by open (or,
// for a deferred index, by create before the first entry is published, so a
// reader touches data only after loading a count above 0) and cleared by
// close, which runs only when no reader remains, and is never remapped in
// between.
type mapped struct {
	file   vfs.File // nil while deferred (and once closed)
	path   string
	base   int64        // the segment's base offset; entries hold offsets relative to it
	size   int          // entry size in bytes
	data   []byte       // the whole mapping; nil when nothing is mapped
	n      atomic.Int64 // valid entries: data[:n*size]
	limit  atomic.Int64 // entries the index may hold
	sealed atomic.Bool  // no more appends

	// Writer-side state.
	writable bool // opened writable: the file's size is ours to change
	// mem is set for an index whose entries live in memory only (see
	// NewMemOffset and LoadOffset): file is nil, and put copies into data.
	mem bool
	// deferred is set while a writable index has no file yet (see
	// deferOpen): fsys and maxBytes are what creating it takes.
	deferred bool
	// absent is set while the index has no file, writable or not: a
	// deferred index that create has not created, or a sealed one opened
	// without its file.
	absent    bool
	fsys      vfs.FS
	maxBytes  int
	fileBytes int64 // the file's size as last set or found
	resized   bool  // the file's size changed since the last Sync
	closed    bool
	// reserved is how many bytes from the start of the file have their
	// blocks reserved on disk by this handle (vfs.File.AllocateRange): the
	// file is sparse, and an entry written into a hole on a full disk would
	// fail, so entries are written only there.
	reserved  int64
	noReserve bool // the file system cannot reserve blocks: entries go into holes
	// hot is 1 + the number of the page of the file into which this handle
	// last wrote an entry with pwrite (0 for none): put copies the entries
	// that lie wholly in that page into the mapping.
	hot int
	// entry is where Append builds an entry before put writes it: a
	// local array would escape (through vfs.File's WriteAt) and cost an
	// allocation per entry.
	entry [TimeEntrySize]byte

	// Mapping on first use (see openLazy). lazy is set while the file is
	// open but not mapped; mapBytes is what its mapping is to cover. While
	// lazy, first and last hold the entries 0 and n-1 as open read them
	// (n cannot change before the mapping: everything that changes the
	// entries maps first, but for a truncateTo whose mapping failed, which
	// publishes a new last entry), so the ends of the index, which a
	// segment's open and its appends look at, are known without a mapping.
	// last points at an array never written once published, so readers
	// need no lock. mapMu serialises the mapping; readers take it only
	// while lazy is set.
	lazy     atomic.Bool
	mapMu    sync.Mutex
	mapBytes int
	first    [TimeEntrySize]byte
	last     atomic.Pointer[[TimeEntrySize]byte]
}

// open opens the file at path as an index of size-byte entries for the
// segment at base; see OpenOffset for what writable and maxBytes mean.
// With lazy, the file is mapped when first needed (see mapNow), not here:
// open reads the first and the last entry with pread instead.
func (m *mapped) open(fsys vfs.FS, path string, base int64, size, maxBytes int, writable, lazy bool) error {
	if base < 0 {
		return fmt.Errorf("index: negative base offset %d for %s", base, path)
	}
	// Map maps read-write, so even a read-only index is opened O_RDWR; it
	// never writes.
	flag := os.O_RDWR
	if writable {
		if maxBytes == 0 {
			maxBytes = DefaultMaxBytes
		}
		if maxBytes < 0 || maxBytes > math.MaxInt32 {
			return fmt.Errorf("index: max bytes %d of %s out of range [0, %d]", maxBytes, path, math.MaxInt32)
		}
		flag |= os.O_CREATE
	}
	f, err := fsys.OpenFile(path, flag, 0o644)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	m.file, m.path, m.base, m.size, m.writable = f, path, base, size, writable
	if err := m.load(maxBytes, lazy); err != nil {
		m.file = nil
		return errors.Join(err, f.Close())
	}
	return nil
}

// deferOpen makes m an empty index of size-byte entries for the file at
// path, which it neither opens nor creates. Writable, it takes entries as an
// index of maxBytes would (0 means DefaultMaxBytes), and creates its file
// (create) when the first entry, or a reservation, needs it. Read-only, it
// is sealed with no entries.
func (m *mapped) deferOpen(fsys vfs.FS, path string, base int64, size, maxBytes int, writable bool) error {
	if base < 0 {
		return fmt.Errorf("index: negative base offset %d for %s", base, path)
	}
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	if maxBytes < 0 || maxBytes > math.MaxInt32 {
		return fmt.Errorf("index: max bytes %d of %s out of range [0, %d]", maxBytes, path, math.MaxInt32)
	}
	m.path, m.base, m.size, m.writable = path, base, size, writable
	m.fsys, m.maxBytes, m.deferred, m.absent = fsys, maxBytes, writable, true
	if writable {
		m.limit.Store(int64(maxBytes / size))
	}
	m.sealed.Store(!writable)
	return nil
}

// create creates, sizes and maps the file of a deferred index; it does
// nothing to one that has its file. The index keeps its entries (none) and
// its seal. Creating the file does not sync its directory.
func (m *mapped) create() error {
	if !m.deferred {
		return nil
	}
	sealed := m.sealed.Load()
	f, err := m.fsys.OpenFile(m.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	m.file = f
	if err := m.load(m.maxBytes, false); err != nil {
		m.file = nil
		return errors.Join(err, f.Close())
	}
	m.deferred, m.absent = false, false
	if sealed {
		m.sealed.Store(true)
	}
	return nil
}

// onDisk reports whether the index has its file: it was opened, or a
// deferred index created it.
func (m *mapped) onDisk() bool { return !m.absent }

// load sizes and maps the freshly opened file; with lazy, it reads the
// ends instead of mapping (see readEnds).
func (m *mapped) load(maxBytes int, lazy bool) error {
	fileBytes, err := m.file.Size()
	if err != nil {
		return fmt.Errorf("index: size of %s: %w", m.path, err)
	}
	if fileBytes > math.MaxInt32 {
		return &CorruptError{Path: m.path, Entry: -1, Pos: fileBytes, Reason: "file larger than 2 GiB"}
	}
	m.fileBytes = fileBytes
	valid := int(fileBytes) / m.size
	mapBytes := int(fileBytes)
	if m.writable {
		// Map room for maxBytes of entries, never dropping entries that
		// are in the file. The file is not extended to it, as Kafka's
		// AbstractIndex does (which trims it again at close): entries are
		// written with pwrite and reservations with fallocate, which grow
		// the file as far as they reach, and readers read only entries
		// that were written. An index that takes no entry before it
		// closes is thus never resized. A partial entry at the end goes.
		mapBytes = max(maxBytes/m.size, valid) * m.size
		if err := m.resize(int64(valid * m.size)); err != nil {
			return err
		}
	} else if fileBytes%int64(m.size) != 0 {
		return &CorruptError{Path: m.path, Entry: -1, Pos: fileBytes,
			Reason: fmt.Sprintf("size is not a multiple of the entry size %d", m.size)}
	}
	m.mapBytes = mapBytes
	switch {
	case lazy && mapBytes > 0:
		if err := m.readEnds(valid); err != nil {
			return err
		}
		m.lazy.Store(true)
	case mapBytes > 0:
		data, err := m.file.Map(mapBytes)
		if err != nil {
			return fmt.Errorf("index: map %s: %w", m.path, err)
		}
		m.data = data
	}
	m.n.Store(int64(valid))
	m.limit.Store(int64(mapBytes / m.size))
	m.sealed.Store(!m.writable)
	return nil
}

// readEnds reads the first and the last of the n entries at the start of
// the file into first and last: one pread for both when they lie within
// endsBytes of the start, else one each.
func (m *mapped) readEnds(n int) error {
	if n == 0 {
		return nil
	}
	size := m.size
	lastAt := (n - 1) * size
	last := new([TimeEntrySize]byte)
	read := func(p []byte, off int) error {
		if k, err := m.file.ReadAt(p, int64(off)); err != nil && !(errors.Is(err, io.EOF) && k == len(p)) {
			return fmt.Errorf("index: reading %s: %w", m.path, err)
		}
		return nil
	}
	if lastAt+size <= endsBytes {
		buf := endsBufs.Get().(*[endsBytes]byte)
		defer endsBufs.Put(buf)
		if err := read(buf[:lastAt+size], 0); err != nil {
			return err
		}
		copy(m.first[:size], buf[:size])
		copy(last[:size], buf[lastAt:])
		m.last.Store(last)
		return nil
	}
	if err := read(m.first[:size], 0); err != nil {
		return err
	}
	if err := read(last[:size], lastAt); err != nil {
		return err
	}
	m.last.Store(last)
	return nil
}

// endsBytes is the most readEnds reads with one pread, into a buffer of
// endsBufs.
const endsBytes = 4 << 10

var endsBufs = sync.Pool{New: func() any { return new([endsBytes]byte) }}

// mapNow maps a lazily opened file (see open) if it is not mapped yet,
// and returns the mapping: at once once it is mapped, else under mapMu,
// so that readers and the writer may all ask at the same time. A
// failure leaves the index unmapped, for a later call to try again.
func (m *mapped) mapNow() ([]byte, error) {
	if !m.lazy.Load() {
		return m.data, nil
	}
	m.mapMu.Lock()
	defer m.mapMu.Unlock()
	if !m.lazy.Load() {
		return m.data, nil
	}
	if m.closed || m.file == nil {
		return nil, fmt.Errorf("index: map %s: %w", m.path, os.ErrClosed)
	}
	data, err := m.file.Map(m.mapBytes)
	if err != nil {
		return nil, fmt.Errorf("index: map %s: %w", m.path, err)
	}
	m.data = data
	m.lazy.Store(false)
	return data, nil
}

// at returns entry i (which must be valid) as its bytes, from the mapping
// or, before it, from the ends open read or with pread. It returns nil if
// the entry cannot be read.
func (m *mapped) at(i int) []byte {
	if !m.lazy.Load() {
		return m.data[i*m.size : (i+1)*m.size]
	}
	if i == 0 {
		return m.first[:m.size]
	}
	if i == m.entries()-1 {
		return m.last.Load()[:m.size]
	}
	if data, err := m.mapNow(); err == nil {
		return data[i*m.size : (i+1)*m.size]
	}
	return nil
}

// floorAtEnds is floor of the first n entries for an index opened lazily
// and not mapped yet, where its first or its last entry is the answer: the
// ends open read (see at) decide it without the mapping. It returns false
// when entries in between must be searched, or the index is mapped.
func (m *mapped) floorAtEnds(n int, f field, target int64) (int, bool) {
	if n == 0 || !m.lazy.Load() {
		return 0, false
	}
	b, ok := f.bound(target)
	switch {
	case !ok || f.raw(m.first[:], f.window) > b:
		return -1, true
	case f.raw(m.last.Load()[:], f.window) <= b:
		return n - 1, true
	}
	return 0, false
}

// resize truncates or extends the file to bytes unless it has that size.
func (m *mapped) resize(bytes int64) error {
	if m.fileBytes == bytes {
		return nil
	}
	if err := m.file.Truncate(bytes); err != nil {
		return fmt.Errorf("index: resize %s to %d bytes: %w", m.path, bytes, err)
	}
	m.fileBytes = bytes
	m.resized = true
	return nil
}

// grew notes that a write or a reservation reached end bytes into the
// file, which grows it to end if it was shorter.
func (m *mapped) grew(end int64) {
	if end > m.fileBytes {
		m.fileBytes = end
		m.resized = true
	}
}

// fits reports whether offset's relative offset fits an entry's int32:
// 0 ≤ offset − base ≤ math.MaxInt32.
func (m *mapped) fits(offset int64) bool {
	return offset >= m.base && offset-m.base <= math.MaxInt32
}

// overflowError is the error of an append of an offset that does not fit.
func (m *mapped) overflowError(offset int64) error {
	return errorf(ErrOffsetOverflow, "offset %d out of range [%d, %d] of %s",
		offset, m.base, m.base+math.MaxInt32, m.path)
}

// view returns the mapping for a reader that loaded n entries, and n: nil
// when n is 0. A deferred index maps its file when its first entry comes,
// so a reader may look at data only once an entry it loaded says the
// mapping is there. A lazily opened index is mapped here; if that fails
// the reader gets no entries (nil, 0), which a lookup takes for an index
// that narrows nothing.
func (m *mapped) view(n int) ([]byte, int) {
	if n == 0 {
		return nil, 0
	}
	data, err := m.mapNow()
	if err != nil {
		return nil, 0
	}
	return data, n
}

// entries returns the number of valid entries.
func (m *mapped) entries() int { return int(m.n.Load()) }

// The steps in which a writable index reserves its file's blocks ahead of
// its entries: the first reserves minReserve bytes, each later one as many
// as are reserved, up to maxReserve, each rounded down to whole entries. A small segment thus reserves a page
// per index, a large one calls fallocate once per 64 KiB (8192 offset
// entries).
const (
	minReserve = 4 << 10
	maxReserve = 64 << 10
)

// reserve makes sure the blocks of the first entries slots are reserved on
// disk, reserving the next step if they are not. It fails, with an error
// wrapping syscall.ENOSPC on a full disk, only if it has to reserve and
// cannot. It does nothing to a read-only or sealed index, nor where the file
// system cannot reserve blocks (errors.ErrUnsupported): entries then go into
// holes of the sparse file, as put says.
func (m *mapped) reserve(entries int) error {
	if !m.writable || m.sealed.Load() {
		return nil
	}
	if err := m.create(); err != nil {
		return err
	}
	need := min(int64(entries)*int64(m.size), int64(m.mapBytes))
	if need <= m.reserved || m.noReserve {
		return nil
	}
	// Whole entries, as Kafka sizes an index file
	// (AbstractIndex.roundDownToExactMultiple): the file, which the
	// reservation grows, then passes a size check while it is written
	// and after a crash (Kafka's TimeIndex.sanityCheck).
	step := min(max(m.reserved, minReserve), maxReserve)
	size := int64(m.size)
	want := min(int64(m.mapBytes), max(need, (m.reserved+step)/size*size))
	err := m.file.AllocateRange(m.reserved, want-m.reserved)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		m.noReserve = true
		return nil
	case err != nil:
		return fmt.Errorf("index: reserving room for entries in %s: %w", m.path, err)
	}
	m.reserved = want
	m.grew(want)
	return nil
}

// put writes entry (m.size bytes) into slot i, where readers see it
// through the mapping, and publishes it as the last entry, once the slots up
// to i+keep are reserved on disk (keep slots after i stay reserved for later
// entries). If they cannot be, as on a full disk, it writes nothing and
// returns the error of reserve. Where the file system cannot reserve
// blocks, a write into a hole of the sparse file may fail on a full disk,
// and publishes nothing.
//
// The first entry written into a page of the file goes in with pwrite: the
// first write through a fresh shared mapping of a page of an ext4 file, and
// a truncate of the file after it, cost hundreds of microseconds, where a
// pwrite of an entry costs about one (mostly the system call). Where the
// file's blocks are reserved, the entries after it in the same page, which
// pwrite has brought into the page cache, are copied into the mapping
// (File.WriteMap): tens of nanoseconds, no system call. An index with one
// entry per batch (batches larger than IndexIntervalBytes) thus makes one
// system call per page of entries (512 offset entries) instead of one per
// batch. An fsync of the file makes both kinds of writes durable, as it
// does the segment's own mapped appends. Where blocks cannot be reserved
// every entry is written with pwrite, so that a full disk fails the write
// rather than a copy into a hole.
func (m *mapped) put(i, keep int, entry []byte) error {
	if m.mem {
		copy(m.data[i*m.size:], entry)
		m.n.Store(int64(i + 1)) // publish
		return nil
	}
	if err := m.reserve(i + 1 + keep); err != nil {
		return err
	}
	if _, err := m.mapNow(); err != nil {
		return err
	}
	off := i * m.size
	end := off + len(entry)
	if page := off / pageSize; m.hot == page+1 && (end-1)/pageSize == page && !m.noReserve && end <= len(m.data) && int64(end) <= m.fileBytes {
		if err := m.file.WriteMap(m.data, off, entry); err != nil {
			return fmt.Errorf("index: writing entry %d of %s: %w", i, m.path, err)
		}
	} else {
		if _, err := m.file.WriteAt(entry, int64(off)); err != nil {
			return fmt.Errorf("index: writing entry %d of %s: %w", i, m.path, err)
		}
		m.hot = (end-1)/pageSize + 1
	}
	m.grew(int64((i + 1) * m.size))
	m.n.Store(int64(i + 1)) // publish
	return nil
}

// pageSize is the size of a page of memory, the unit in which put tells
// which entries pwrite has brought into the page cache.
var pageSize = os.Getpagesize()

// checkEntry panics unless 0 ≤ i < n.
func (m *mapped) checkEntry(i, n int) {
	if i < 0 || i >= n {
		panic(fmt.Sprintf("index: entry %d out of range [0, %d)", i, n))
	}
}

// full reports whether the first limit-reserve slots are all used.
func (m *mapped) full(reserve int) bool {
	return m.sealed.Load() || m.n.Load() >= m.limit.Load()-int64(reserve)
}

// lower drops the entries from k on, if there are more than k.
func (m *mapped) lower(k int) {
	if int64(k) < m.n.Load() {
		m.n.Store(int64(k))
	}
}

// truncateTo drops the entries whose offset, the relative offset f, is at
// least offset. An index that cannot be mapped (see mapNow) reads its
// entries with pread to find them; one that cannot be read either drops
// every entry.
func (m *mapped) truncateTo(f field, offset int64) {
	switch {
	case offset <= m.base:
		m.lower(0)
	case offset-m.base <= math.MaxInt32:
		data, n := m.view(m.entries())
		if n < m.entries() {
			data, n = m.readEntries()
		}
		k := ceil(data, n, f, offset-m.base)
		if k > 0 && m.lazy.Load() {
			last := new([TimeEntrySize]byte) // the new last entry (see at)
			copy(last[:m.size], data[(k-1)*m.size:])
			m.last.Store(last)
		}
		m.lower(k)
	}
}

// readEntries reads the valid entries with pread, for an index that could
// not be mapped, and returns them and their number; nothing (nil, 0) if
// they cannot be read either.
func (m *mapped) readEntries() ([]byte, int) {
	n := m.entries()
	if m.file == nil || n == 0 {
		return nil, 0
	}
	buf := make([]byte, n*m.size)
	if k, err := m.file.ReadAt(buf, 0); err != nil && !(errors.Is(err, io.EOF) && k == len(buf)) {
		return nil, 0
	}
	return buf, n
}

// sync makes the valid entries durable, and the file's size if it changed.
func (m *mapped) sync() error {
	if !m.writable || m.closed || m.deferred {
		return nil
	}
	// Entries are written with pwrite or copied into pages pwrite wrote
	// (see put), which an fsync of the file covers, as it covers the
	// segment's mapped appends: no msync of the whole mapping.
	if m.resized || m.n.Load() > 0 {
		if err := m.file.Sync(); err != nil {
			return fmt.Errorf("index: sync %s: %w", m.path, err)
		}
		m.resized = false
	}
	return nil
}

// trim seals the index and truncates the file to its valid entries, keeping
// the mapping. It does nothing to a read-only or closed index.
func (m *mapped) trim() error {
	if !m.writable || m.closed {
		return nil
	}
	n := m.n.Load()
	if !m.deferred {
		if err := m.resize(n * int64(m.size)); err != nil {
			return err
		}
	}
	m.sealed.Store(true)
	m.limit.Store(n)
	return nil
}

// close trims a writable index, unmaps and closes the file. It is
// idempotent.
func (m *mapped) close() error {
	if m.closed {
		return nil
	}
	err := m.trim()
	m.lazy.Store(false)
	m.closed = true
	m.sealed.Store(true)
	m.n.Store(0)
	m.limit.Store(0)
	if m.mem {
		m.data = nil
	}
	if m.data != nil {
		if uerr := m.file.Unmap(m.data); uerr != nil {
			err = errors.Join(err, fmt.Errorf("index: unmap %s: %w", m.path, uerr))
		}
		m.data = nil
	}
	if m.file != nil {
		if cerr := m.file.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("index: close %s: %w", m.path, cerr))
		}
		m.file = nil
	}
	return err
}
