package segment

import (
	"runtime"
	"sync"

	"github.com/stratalog/strata/vfs"
)

// zeroFiller writes a step of zeros into a segment's .log file on a
// goroutine of its own, ahead of the appends, while they go on into the
// zeros written before: the kernel's work of readying the step's pages
// then runs on another core rather than in an append. Only the writer
// starts and joins the goroutine, which writes nothing below the zeros the
// writer knows of (Segment.zeroed), and the writer writes nothing past
// them while a step is being written: they never write the same bytes.
type zeroFiller struct {
	wg    sync.WaitGroup
	on    bool  // a step is being written
	to    int64 // its end
	ok    bool  // set by the goroutine: the whole step was written
	async int8  // whether steps are written on a goroutine: 0 not known yet, 1 yes, -1 no
}

// zerosFor makes sure, as far as it can, that the .log file holds written
// bytes (batches or zeros) from pos past end, for an append there: it
// joins the step being written if the append reaches past the zeros, then
// writes a step itself (fillZeros) if they still do not reach, and starts
// the next step on a goroutine once less than half a step of zeros is left
// ahead of the append.
func (s *Segment) zerosFor(pos, end int64) {
	if end > s.zeroed {
		s.joinZeros()
	}
	if end > s.zeroed {
		s.fillZeros(pos, end)
	}
	step := s.zeroStepAt()
	if s.zeros.on || s.zeroed-end >= step/2 || !s.asyncZeros() {
		return
	}
	from, to := s.zeroed, min(int64(len(s.data)), s.zeroed+step)
	if to <= from {
		return
	}
	z := &s.zeros
	z.on, z.to, z.ok = true, to, false
	f := s.log
	z.wg.Go(func() { z.ok = writeZeros(f, from, to) == nil })
}

// joinZeros waits for the step of zeros being written, if any, and counts
// it once it is whole. Whatever changes the .log file's size or closes it
// joins first.
func (s *Segment) joinZeros() {
	z := &s.zeros
	if !z.on {
		return
	}
	z.wg.Wait()
	z.on = false
	if z.ok {
		s.zeroed = max(s.zeroed, z.to)
		s.allocated = max(s.allocated, z.to)
	}
}

// asyncZeros reports whether steps of zeros are written on a goroutine:
// for files of the OS (an in-memory file's writes are too cheap to gain,
// and the crash tests count its operations in order), with more than one P
// to run it on. The answer of the segment's first look is kept.
func (s *Segment) asyncZeros() bool {
	if s.zeros.async == 0 {
		s.zeros.async = -1
		if vfs.IsOS(s.fsys) && runtime.GOMAXPROCS(0) > 1 {
			s.zeros.async = 1
		}
	}
	return s.zeros.async > 0
}
