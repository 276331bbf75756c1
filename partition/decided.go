package partition

import (
	"slices"
	"sync"
)

// decidedMarkers are the offsets of the markers of WriteDecidedMarker that
// may not be durable yet, under SyncAlways: the high watermark passes
// those that follow the synced offset without a gap, since a crash that
// loses them loses nothing a reader saw (the coordinator writes them
// again, at the end of what survived).
type decidedMarkers struct {
	mu   sync.Mutex
	offs []int64 // ascending; those below the synced offset go at the next change
}

// setSynced sets the synced offset and the high watermark to off,
// forgetting the decided markers: Open and Truncate, which rebuild what
// the partition holds, call it.
func (p *Partition) setSynced(off int64) {
	d := &p.decided
	d.mu.Lock()
	defer d.mu.Unlock()
	d.offs = nil
	p.synced.Store(off)
	p.visible.Store(off)
}

// publishSynced moves the synced offset up to off, waking readers waiting
// for records when that moves the high watermark (SyncAlways). The caller
// holds syncMu (or is the partition's only user: Open, Truncate, Close).
func (p *Partition) publishSynced(off int64) {
	d := &p.decided
	d.mu.Lock()
	if p.synced.Load() >= off {
		d.mu.Unlock()
		return
	}
	p.synced.Store(off)
	moved := p.advanceVisibleLocked()
	d.mu.Unlock()
	if moved && p.cfg.Sync.Mode == SyncModeAlways {
		p.appended.broadcast()
	}
}

// addDecided enters the decided marker at off, appended under SyncAlways,
// and wakes the readers waiting for records: the high watermark, or the
// last stable offset, may have moved.
func (p *Partition) addDecided(off int64) {
	d := &p.decided
	d.mu.Lock()
	if i, found := slices.BinarySearch(d.offs, off); !found {
		d.offs = slices.Insert(d.offs, i, off)
	}
	p.advanceVisibleLocked()
	d.mu.Unlock()
	p.appended.broadcast()
}

// advanceVisibleLocked moves the high watermark under SyncAlways to the
// synced offset and past the decided markers that follow it without a
// gap (a marker takes one offset), and reports whether it moved. The
// caller holds decided.mu.
func (p *Partition) advanceVisibleLocked() bool {
	d := &p.decided
	hw := p.synced.Load()
	n := 0
	for n < len(d.offs) && d.offs[n] < hw {
		n++
	}
	d.offs = d.offs[n:]
	for _, off := range d.offs {
		if off != hw {
			break
		}
		hw++
	}
	if hw <= p.visible.Load() {
		return false
	}
	p.visible.Store(hw)
	return true
}
