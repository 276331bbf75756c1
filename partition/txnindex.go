package partition

import (
	"fmt"
	"sort"

	"github.com/stratalog/strata/segment"
)

// AbortedTxn is a transaction its producer aborted: its batches lie in
// [FirstOffset, LastOffset), among other producers' batches, and its ABORT
// marker is at LastOffset. Each segment keeps those whose markers it holds
// in its .txnindex, in Kafka's format.
type AbortedTxn = segment.AbortedTxn

// addAbortedMuLocked records t, whose ABORT marker is appended, in the
// .txnindex of the segment holding the marker. A transaction already
// recorded (a marker replayed while rebuilding producer state) is not
// recorded twice. The caller holds mu; read_committed readers see the
// entry before the caller moves the last stable offset past t.FirstOffset.
// The active segment's entries are fsynced with its .log (by the group
// commit, a roll or Close); an entry added to a sealed segment, which only
// a replay of the log adds, is fsynced at once.
func (p *Partition) addAbortedMuLocked(t AbortedTxn) error {
	st := p.state.Load()
	var segs []*segRef
	if st != nil {
		segs = st.segs
	}
	i := sort.Search(len(segs), func(i int) bool { return segs[i].seg.Base() > t.LastOffset }) - 1
	if i < 0 {
		return fmt.Errorf("partition: aborted transaction of producer %d ending at %d, below %s's first segment: %w",
			t.ProducerID, t.LastOffset, p.name, segment.ErrInvalidBatch)
	}
	seg := segs[i].seg
	if err := seg.AppendAbortedTxn(t); err != nil {
		return fmt.Errorf("partition: %s: %w", p.name, err)
	}
	if i < len(segs)-1 {
		// A sealed segment (a marker replayed after a crash): nothing else
		// fsyncs it again.
		if err := seg.SyncTxnIndex(); err != nil {
			return fmt.Errorf("partition: %s: %w", p.name, err)
		}
	}
	return nil
}

// AbortedTxns returns the aborted transactions that overlap [from, upto):
// those whose last offset is at or past from and whose first offset is
// below upto, by rising last offset, as Kafka's
// UnifiedLog.collectAbortedTransactions answers a read_committed fetch. It
// looks at the segments from the one holding from on, and stops at the
// first that holds a transaction aborted when the last stable offset had
// reached upto (none later can start below it). The slice is the caller's.
func (p *Partition) AbortedTxns(from, upto int64) []AbortedTxn {
	return p.appendAbortedTxns(nil, from, upto)
}

// appendAbortedTxns appends to out what AbortedTxns returns.
func (p *Partition) appendAbortedTxns(out []AbortedTxn, from, upto int64) []AbortedTxn {
	if upto <= from {
		return out
	}
	segs := p.state.Load().segs
	i := max(0, sort.Search(len(segs), func(i int) bool { return segs[i].seg.Base() > from })-1)
	for k, r := range segs[i:] {
		list := r.seg.AbortedTxns()
		if k == 0 {
			// By rising last offset: those ending before from are of no
			// interest.
			list = list[sort.Search(len(list), func(j int) bool { return list[j].LastOffset >= from }):]
		}
		done := false
		for _, t := range list {
			if t.FirstOffset < upto {
				out = append(out, t)
			}
			if t.LastStableOffset >= upto {
				done = true
				break
			}
		}
		if done {
			break
		}
	}
	return out
}
