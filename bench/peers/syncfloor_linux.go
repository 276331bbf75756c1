package peers

import (
	"errors"

	"golang.org/x/sys/unix"
)

func init() {
	register(Peer{
		Name:     "sync-floor",
		Open:     openSyncFloor,
		Baseline: true,
		Only:     "w3",
		Note:     "baseline of W3 alone, not a log: raw-file's records, each call one pwrite(2) and, when durable, one fdatasync; when durable, Open first fills the file with zeros and syncs them (160 MiB, not timed), so that no fdatasync has metadata to commit (a file that outgrows the zeros grows as raw-file's does): the least a durable append on this disk costs",
	})
}

// syncFloorAhead is how much of its file sync-floor zero-fills ahead at
// Open: more than W3 writes of 1 M records.
const syncFloorAhead = 160 << 20

// syncFloor is rawFile written with pwrite into zeros already on disk.
type syncFloor struct {
	*rawFile
}

func openSyncFloor(dir string, o Options) (Log, error) {
	l, err := openRawFile(dir, o)
	if err != nil {
		return nil, err
	}
	r := l.(*rawFile)
	s := &syncFloor{rawFile: r}
	if !o.Durable {
		return s, nil // no sync to spare: raw-file's writes, by pwrite
	}
	if err := s.zeroAhead(); err != nil {
		return nil, errors.Join(err, r.f.Close())
	}
	return s, nil
}

// zeroAhead writes zeros from the end of the records to syncFloorAhead
// and syncs them, so that the appends after it overwrite written blocks.
func (s *syncFloor) zeroAhead() error {
	end := s.pos[len(s.pos)-1]
	zeros := make([]byte, 1<<20)
	for at := end; at < syncFloorAhead; at += int64(len(zeros)) {
		if _, err := s.f.WriteAt(zeros[:min(int64(len(zeros)), syncFloorAhead-at)], at); err != nil {
			return err
		}
	}
	return unix.Fdatasync(int(s.f.Fd()))
}

func (s *syncFloor) Append(recs []Rec) error {
	end := s.pos[len(s.pos)-1]
	s.buf = appendRaw(s.buf[:0], recs, end, &s.pos)
	if _, err := s.f.WriteAt(s.buf, end); err != nil {
		s.pos = s.pos[:len(s.pos)-len(recs)]
		return err
	}
	if s.durable {
		return unix.Fdatasync(int(s.f.Fd()))
	}
	return nil
}

// Close cuts the zeros past the records, so that a reopen finds the
// records alone, as raw-file's load reads them.
func (s *syncFloor) Close() error {
	err := s.f.Truncate(s.pos[len(s.pos)-1])
	if s.durable {
		err = errors.Join(err, s.f.Sync())
	}
	return errors.Join(err, s.f.Close())
}
