package partition

import (
	"fmt"
	"time"

	"github.com/stratalog/strata/retention"
)

// EnforceRetention deletes the oldest segments that policy lets go at time
// now (see package retention: start offset, size, then time, whole segments
// only, oldest first). If the active segment goes too, the partition rolls
// first, so it always keeps one segment. The start offset moves to the first
// remaining segment's base. It returns how many segments went.
//
// Deletion renames a segment's files to .deleted at once (and fsyncs the
// directory); the files are closed, unmapped and unlinked when the last
// reader holding the segment lets go. A crash in between leaves .deleted
// files, which Open removes. policy.StartOffset is ignored: the partition's
// own is used.
func (p *Partition) EnforceRetention(now time.Time, policy retention.Policy) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.writableMuLocked(); err != nil {
		return 0, fmt.Errorf("partition: %s: %w", p.name, err)
	}
	p.expireMuLocked(now)
	st := p.state.Load()
	sums := make([]retention.Segment, len(st.segs))
	for i, r := range st.segs {
		sums[i] = retention.Segment{Base: r.seg.Base(), Bytes: r.seg.Size(), MaxTimestamp: r.seg.MaxTimestamp()}
	}
	policy.StartOffset = p.start.Load()
	reasons := retention.Deletable(sums, now.UnixMilli(), policy)
	n := len(reasons)
	if n == 0 {
		return 0, nil
	}
	if n == len(st.segs) {
		// The active segment goes too: roll, so one segment remains.
		if err := p.rollMuLocked(p.end.Load()); err != nil {
			return 0, err
		}
		st = p.state.Load()
	}
	victims := st.segs[:n]
	rest := make([]*segRef, len(st.segs)-n)
	copy(rest, st.segs[n:])
	// The start offset moves before the segments go, so that a reader never
	// sees an offset at or above the start that no segment holds.
	if base := rest[0].seg.Base(); base > p.start.Load() {
		p.start.Store(base)
	}
	p.state.Store(&state{segs: rest})
	var err error
	for i, r := range victims {
		if err == nil {
			err = r.seg.MarkDeleted()
		}
		p.cfg.Logger.Debug("partition: retention deletes a segment", "dir", p.dir,
			"base", r.seg.Base(), "next", r.seg.NextOffset(), "reason", reasons[i].String())
		r.remove.Store(true)
		_ = r.release()
	}
	p.removeSnapshotsBeforeMuLocked(rest[0].seg.Base())
	if err == nil {
		err = p.fsys.SyncDir(p.dir)
	}
	if err != nil {
		return n, fmt.Errorf("partition: retention in %s: %w", p.name, err)
	}
	return n, nil
}
