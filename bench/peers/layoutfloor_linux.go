package peers

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

func init() {
	register(Peer{
		Name:     "layout-floor",
		Open:     openLayoutFloor,
		Baseline: true,
		Only:     "w6",
		Note:     "baseline of W6 alone, not a log: Strata writes the log and reads it as W4 and W5 do (not shown); the reopen is only the system calls and reads of its files (lock and list the directory, remove the clean-shutdown marker, read topics.json, list the partition directory, map the .log and .index, read the .timeindex and partition.metadata) and a walk from the index's last entry to the last record, nothing parsed, checked or started: the least any Open of these files and read of the last record costs",
	})
}

// errNoStore is layoutFloor's answer for a directory without a cleanly
// closed store (no directory, or no clean-shutdown marker).
var errNoStore = errors.New("peers: layout-floor: no cleanly closed Strata store")

// openLayoutFloor writes through Strata into a new directory, and reopens
// one Strata closed with layoutFloor.
func openLayoutFloor(dir string, o Options) (Log, error) {
	f, err := layoutFloor(dir)
	if errors.Is(err, errNoStore) {
		return openStore(dir, o)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// floorLog is a reopen by layoutFloor: it holds the last record, and
// reads nothing else.
type floorLog struct {
	key, value []byte
	last       int64 // the last record's index
	done       func() error
}

func (f *floorLog) Append([]Rec) error {
	return errors.New("peers: layout-floor: a reopened floor does not append")
}

func (f *floorLog) Scan(int64, func(int64, []byte, []byte) bool) error {
	return errors.New("peers: layout-floor: a reopened floor does not scan")
}

func (f *floorLog) Get(i int64, fn func(key, value []byte)) error {
	if i != f.last {
		return fmt.Errorf("peers: layout-floor: a reopened floor holds only its last record, %d, not %d", f.last, i)
	}
	fn(f.key, f.value)
	return nil
}

func (f *floorLog) Close() error { return f.done() }

// layoutFloor is the least a reopen of the Strata directory dir can do in
// system calls and reads, with nothing but the layout's bytes to go on
// (Kafka's partition directory, Strata's lock, clean-shutdown marker and
// registry), for the strata peer's one topic of one partition. It locks
// the directory (open, flock) and lists it (getdents), removes the
// clean-shutdown marker, reads topics.json (open, fstat, pread, close),
// lists the partition directory, maps the segment's .log and .index
// (open, fstat, mmap each), reads the .timeindex's first entry (open,
// fstat, pread) and partition.metadata, then finds the last record by the
// index's last entry and a walk of the batches after it, and returns its
// key and value. It parses nothing else, checks no CRC, keeps no state
// and starts nothing, so its time is a floor under any Open of these files
// followed by a read of the last record, not a log. done puts the marker
// back and releases everything; after an error the marker stays removed,
// as after a crash.
func layoutFloor(dir string) (*floorLog, error) {
	var fds []int
	var maps [][]byte
	release := func() error {
		var errs []error
		for _, m := range maps {
			errs = append(errs, unix.Munmap(m))
		}
		for _, fd := range fds {
			errs = append(errs, unix.Close(fd))
		}
		return errors.Join(errs...)
	}
	fail := func(e error) (*floorLog, error) {
		return nil, errors.Join(e, release())
	}
	open := func(name string, flags int) (int, int64, error) {
		fd, err := unix.Open(name, flags|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, 0, fmt.Errorf("open %s: %w", name, err)
		}
		fds = append(fds, fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return -1, 0, err
		}
		return fd, st.Size, nil
	}
	openDir := func(name string) (int, error) {
		fd, err := unix.Open(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, fmt.Errorf("open %s: %w", name, err)
		}
		fds = append(fds, fd)
		return fd, nil
	}
	list := func(fd int) error {
		var buf [8192]byte
		for {
			n, err := unix.Getdents(fd, buf[:])
			if err != nil || n == 0 {
				return err
			}
		}
	}
	var buf [4096]byte
	read := func(name string) error {
		fd, size, err := open(name, unix.O_RDONLY)
		if err != nil {
			return err
		}
		if size > int64(len(buf)) {
			return fmt.Errorf("%s: %d bytes", name, size)
		}
		_, err = unix.Pread(fd, buf[:size], 0)
		return err
	}

	dfd, err := openDir(dir)
	if errors.Is(err, unix.ENOENT) {
		return fail(errNoStore)
	}
	if err != nil {
		return fail(err)
	}
	if err := unix.Flock(dfd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fail(err)
	}
	if err := list(dfd); err != nil {
		return fail(err)
	}
	marker := filepath.Join(dir, ".clean-shutdown")
	if err := unix.Unlink(marker); errors.Is(err, unix.ENOENT) {
		return fail(errNoStore)
	} else if err != nil {
		return fail(err)
	}
	registry := filepath.Join(dir, "topics.json")
	if err := read(registry); err != nil {
		return fail(err)
	}
	part := filepath.Join(dir, strataTopic+"-0")
	pfd, err := openDir(part)
	if err != nil {
		return fail(err)
	}
	if err := list(pfd); err != nil {
		return fail(err)
	}
	mapFile := func(name string, capacity int) ([]byte, int64, error) {
		fd, size, err := open(name, unix.O_RDWR)
		if err != nil {
			return nil, 0, err
		}
		m, err := unix.Mmap(fd, 0, capacity, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			return nil, 0, err
		}
		maps = append(maps, m)
		return m, size, nil
	}
	seg := filepath.Join(part, "00000000000000000000")
	log, logSize, err := mapFile(seg+".log", 1<<30)
	if err != nil {
		return fail(err)
	}
	idx, idxSize, err := mapFile(seg+".index", 10<<20)
	if err != nil {
		return fail(err)
	}
	tfd, _, err := open(seg+".timeindex", unix.O_RDWR)
	if err != nil {
		return fail(err)
	}
	if _, err := unix.Pread(tfd, buf[:12], 0); err != nil {
		return fail(err)
	}
	if err := read(filepath.Join(part, "partition.metadata")); err != nil {
		return fail(err)
	}

	if idxSize < 8 || logSize < 61 {
		return fail(errors.New("layout-floor: no index entry or no batch"))
	}
	pos := int64(binary.BigEndian.Uint32(idx[idxSize-4:]))
	last := int64(-1)
	for pos+12 <= logSize {
		last = pos
		pos += 12 + int64(binary.BigEndian.Uint32(log[pos+8:]))
	}
	if last < 0 || pos != logSize {
		return fail(errors.New("layout-floor: the batches after the last index entry do not end at the end of the file"))
	}
	// The last batch's records, walked as format-floor walks them: its
	// last one is the log's.
	var key, value []byte
	lastOffset := int64(-1)
	if _, err := floorWalk(log[last:logSize], 0, func(i int64, k, v []byte) bool {
		key, value, lastOffset = k, v, i
		return true
	}); err != nil {
		return fail(err)
	}
	if lastOffset < 0 {
		return fail(errors.New("layout-floor: the last batch holds no record"))
	}
	done := func() error {
		return errors.Join(release(), unix.Link(registry, marker))
	}
	return &floorLog{key: key, value: value, last: lastOffset, done: done}, nil
}
