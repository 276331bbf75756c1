//go:build unix

package peers

import (
	"encoding/binary"
	"errors"

	"golang.org/x/sys/unix"
)

func init() {
	register(Peer{
		Name:     "raw-mmap",
		Open:     openRawMmap,
		Baseline: true,
		Note:     "baseline, not a log: raw-file's records and writes; reads through one read-only shared mmap(2) of the file, made at the first read after the file grew (as a log maps its file once), a scan stepping from record to record by their length prefixes, nothing checked but that they stay inside the file: the least any reader of these bytes through a mapping does",
	})
}

// errTorn is a record whose lengths reach past the end of the file.
var errTorn = errors.New("peers: raw-mmap: a record's lengths reach past the end of the file")

// rawMmap is rawFile read through a mapping: the ceiling of a scan of the
// bytes a log keeps in one file.
type rawMmap struct {
	*rawFile
	m []byte // the mapping, of the file's first len(m) bytes; nil if none
}

func openRawMmap(dir string, o Options) (Log, error) {
	l, err := openRawFile(dir, o)
	if err != nil {
		return nil, err
	}
	return &rawMmap{rawFile: l.(*rawFile)}, nil
}

// mapped returns a mapping of at least the file's first n bytes, mapping
// the file again when it grew past the mapping.
func (r *rawMmap) mapped(n int64) ([]byte, error) {
	if int64(len(r.m)) >= n {
		return r.m, nil
	}
	if err := r.unmap(); err != nil {
		return nil, err
	}
	m, err := unix.Mmap(int(r.f.Fd()), 0, int(n), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	r.m = m
	return m, nil
}

func (r *rawMmap) unmap() error {
	if r.m == nil {
		return nil
	}
	err := unix.Munmap(r.m)
	r.m = nil
	return err
}

func (r *rawMmap) Scan(from int64, fn func(i int64, key, value []byte) bool) error {
	end := int64(len(r.pos) - 1)
	if from < 0 || from > end {
		return errMissing
	}
	if from == end {
		return nil
	}
	stop := r.pos[end]
	m, err := r.mapped(stop)
	if err != nil {
		return err
	}
	m = m[:stop]
	at := r.pos[from]
	for i := from; i < end; i++ {
		if at+rawHeader > stop {
			return errTorn
		}
		k := int64(binary.LittleEndian.Uint32(m[at:]))
		v := int64(binary.LittleEndian.Uint32(m[at+4:]))
		kat := at + rawHeader
		next := kat + k + v
		if next > stop || next < kat {
			return errTorn
		}
		if !fn(i, m[kat:kat+k:kat+k], m[kat+k:next:next]) {
			return nil
		}
		at = next
	}
	return nil
}

func (r *rawMmap) Get(i int64, fn func(key, value []byte)) error {
	if i < 0 || i >= int64(len(r.pos)-1) {
		return errMissing
	}
	m, err := r.mapped(r.pos[len(r.pos)-1])
	if err != nil {
		return err
	}
	fn(r.record(m[r.pos[i]:r.pos[i+1]]))
	return nil
}

func (r *rawMmap) Close() error {
	return errors.Join(r.unmap(), r.rawFile.Close())
}
