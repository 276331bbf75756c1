package group

import (
	"fmt"
	"maps"
	"slices"
	"sync"
)

// TxnOffsetLog is an [OffsetLog] that can also write a transaction's
// commits and end marker, as Kafka's group coordinator writes them to
// __consumer_offsets: the commits as one transactional batch of the
// transaction's producer id and epoch, the end as that producer's COMMIT
// or ABORT control batch, whose offset in the log AppendMarker returns. A
// Coordinator whose log is a TxnOffsetLog takes transactional commits
// ([Coordinator.CommitTxn]).
//
// Both methods follow Append's rules: all or nothing, as durable as any
// append once they return, called with group locks held (they must not
// call back into the Coordinator). An error that says the producer is
// fenced (an epoch older than its current one) is returned to the caller
// as it is.
type TxnOffsetLog interface {
	OffsetLog
	AppendTxn(producerID int64, epoch int16, commits []Commit) error
	AppendMarker(producerID int64, epoch int16, commit bool) (offset int64, err error)
}

// txnOffset is an offset committed in a transaction that has not ended:
// it becomes the group's committed offset when its producer's COMMIT
// marker is written (unless superseded), and goes at ABORT.
type txnOffset struct {
	om OffsetAndMetadata
	// seq orders the pending offsets of a group as the log does: a later
	// append has a larger seq.
	seq uint64
	// superseded is set when the partition's offset was set, by a commit
	// or another transaction's, after this one was written: Kafka keeps
	// the offset the log holds last (GroupMetadata's
	// completePendingTxnOffsetCommit compares their log positions).
	superseded bool
}

// txnStripes is how many locks serialize the transactional calls of
// producers: those of one producer id always take the same one.
const txnStripes = 64

// txnState is the Coordinator's index of transactions with pending
// offsets: for each producer id, the groups that hold some.
type txnState struct {
	stripes [txnStripes]sync.Mutex // by producer id; taken before any group's lock
	mu      sync.Mutex
	groups  map[int64]map[string]struct{}
}

// stripe returns the lock of producer id's transactional calls.
func (t *txnState) stripe(id int64) *sync.Mutex { return &t.stripes[uint64(id)%txnStripes] }

// note records that group holds pending offsets of producer id.
func (t *txnState) note(id int64, group string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.groups == nil {
		t.groups = map[int64]map[string]struct{}{}
	}
	gs := t.groups[id]
	if gs == nil {
		gs = map[string]struct{}{}
		t.groups[id] = gs
	}
	gs[group] = struct{}{}
}

// take returns, sorted, and forgets the groups that hold pending offsets
// of producer id.
func (t *txnState) take(id int64) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	gs := t.groups[id]
	delete(t.groups, id)
	return slices.Sorted(maps.Keys(gs))
}

// CommitTxn commits offsets for group inside the transaction of producer
// producerID at epoch, as Kafka's TxnOffsetCommit does in a
// consume-transform-produce loop: the commits are appended to the log as
// one transactional batch of that producer ([TxnOffsetLog.AppendTxn]) and
// stay pending — Committed does not return them — until [Coordinator.EndTxn]
// (or, in a replay, [Coordinator.CompleteTxn]) commits the transaction,
// which makes them the group's committed offsets, or aborts it, which
// drops them. Committing a partition again in the same transaction
// replaces its pending offset.
//
// The offsets are checked as Commit checks them. A member commits with its
// MemberRef and is fenced as in Commit; the zero MemberRef commits without
// a member check, also while the group has members (Kafka's
// sendOffsetsToTransaction with only a group id: the producer's epoch
// fences a zombie instead). A negative producer id or epoch is
// [ErrInvalidProducer]; a Coordinator whose log is not a TxnOffsetLog
// returns [ErrTxnUnsupported]; a log error (a fenced epoch, say) leaves
// nothing pending. Committing no offsets checks the ref and writes nothing.
//
// CommitTxn and EndTxn of one producer id are serialized: an EndTxn never
// ends a transaction halfway through one of its CommitTxn calls.
func (c *Coordinator) CommitTxn(group string, ref MemberRef, producerID int64, epoch int16, offsets map[TopicPartition]OffsetAndMetadata) error {
	if err := checkProducer(producerID, epoch); err != nil {
		return err
	}
	tlog, ok := c.log.(TxnOffsetLog)
	if !ok && c.log != nil {
		return fmt.Errorf("group: transactional commit to group %q: %w", group, ErrTxnUnsupported)
	}
	commits, err := c.commitsOf(group, offsets, ref == MemberRef{})
	if err != nil {
		return err
	}
	stripe := c.txn.stripe(producerID)
	stripe.Lock()
	defer stripe.Unlock()
	g := c.lockGroup(group, true)
	defer g.mu.Unlock()
	if err := g.checkCommitterLocked(ref, commits, true); err != nil {
		return err
	}
	if len(commits) == 0 {
		return nil
	}
	c.stampLocked(commits)
	if tlog != nil {
		if err := tlog.AppendTxn(producerID, epoch, commits); err != nil {
			return fmt.Errorf("group: committing %d offsets of group %q in the transaction of producer %d: %w", len(commits), group, producerID, err)
		}
	}
	c.txn.note(producerID, group)
	g.addPendingLocked(producerID, commits)
	return nil
}

// EndTxn ends producer producerID's transaction in the groups' offsets:
// it appends the producer's marker to the log ([TxnOffsetLog.AppendMarker],
// COMMIT if commit is set, else ABORT), then makes the offsets the
// transaction committed the groups' committed offsets, or drops them. It
// returns the marker's offset in the log (-1 without a log). A
// transaction's coordinator calls it, as it writes its other markers,
// once the outcome is decided; the marker is written even when no offset
// is pending (after a restart whose replay found none, the marker still
// ends the transaction in the log).
//
// On a log error nothing changes: the offsets stay pending, and EndTxn
// can be called again. A negative producer id or epoch is
// [ErrInvalidProducer].
func (c *Coordinator) EndTxn(producerID int64, epoch int16, commit bool) (int64, error) {
	if err := checkProducer(producerID, epoch); err != nil {
		return -1, err
	}
	tlog, ok := c.log.(TxnOffsetLog)
	if !ok && c.log != nil {
		return -1, fmt.Errorf("group: ending the transaction of producer %d: %w", producerID, ErrTxnUnsupported)
	}
	stripe := c.txn.stripe(producerID)
	stripe.Lock()
	defer stripe.Unlock()
	offset := int64(-1)
	if tlog != nil {
		var err error
		if offset, err = tlog.AppendMarker(producerID, epoch, commit); err != nil {
			return -1, fmt.Errorf("group: ending the transaction of producer %d: %w", producerID, err)
		}
	}
	c.completeTxn(producerID, commit)
	return offset, nil
}

// CompleteTxn applies producer producerID's COMMIT (commit set) or ABORT
// marker that the log already holds, without appending anything: the
// store calls it while it replays the log at open, where it reads the
// marker, and a caller that wrote the marker to the log itself calls it
// after. Offsets replayed with [Coordinator.ReplayTxn] before the marker
// are committed or dropped, as EndTxn does.
func (c *Coordinator) CompleteTxn(producerID int64, commit bool) {
	stripe := c.txn.stripe(producerID)
	stripe.Lock()
	defer stripe.Unlock()
	c.completeTxn(producerID, commit)
}

// completeTxn commits or drops producer id's pending offsets in every
// group. The caller holds the producer's stripe.
func (c *Coordinator) completeTxn(id int64, commit bool) {
	for _, name := range c.txn.take(id) {
		if g := c.lockGroup(name, false); g != nil {
			g.completePendingLocked(id, commit)
			g.mu.Unlock()
		}
	}
}

// ReplayTxn applies commits read back from a transactional batch of
// producer producerID in the log, in log order, as pending offsets of that
// producer's transaction, without appending them anywhere; the marker that
// ends the transaction later in the log is replayed with
// [Coordinator.CompleteTxn]. Offsets whose transaction has no marker yet
// stay pending (the transaction is open). A tombstone drops the partition's
// pending offset of the transaction; commits with an invalid group id are
// skipped.
func (c *Coordinator) ReplayTxn(producerID int64, commits ...Commit) {
	stripe := c.txn.stripe(producerID)
	stripe.Lock()
	defer stripe.Unlock()
	for _, cm := range commits {
		if checkGroup(cm.Group) != nil {
			continue
		}
		g := c.lockState(cm.Group, true)
		if cm.Deleted {
			delete(g.pending[producerID], cm.TopicPartition())
		} else {
			c.txn.note(producerID, cm.Group)
			g.addPendingLocked(producerID, []Commit{cm})
		}
		g.mu.Unlock()
	}
}

// PendingTxn reports whether group has an offset for the partition
// pending in a transaction that has not ended: a consumer reading
// committed data waits for it to end before it starts from the group's
// committed offset (Kafka's UNSTABLE_OFFSET_COMMIT, KIP-447's
// require_stable), or it would read again what the transaction consumed.
func (c *Coordinator) PendingTxn(group, topic string, partition int) bool {
	g := c.lockGroup(group, false)
	if g == nil {
		return false
	}
	defer g.mu.Unlock()
	return g.pendingLocked(TopicPartition{Topic: topic, Partition: partition})
}

// checkProducer checks a transaction's producer id and epoch.
func checkProducer(id int64, epoch int16) error {
	if id < 0 || epoch < 0 {
		return fmt.Errorf("group: producer id %d and epoch %d, want both 0 or more: %w", id, epoch, ErrInvalidProducer)
	}
	return nil
}

// addPendingLocked holds commits, written by producer id's transaction, as
// pending offsets.
func (g *groupState) addPendingLocked(id int64, commits []Commit) {
	if g.pending == nil {
		g.pending = map[int64]map[TopicPartition]*txnOffset{}
	}
	offs := g.pending[id]
	if offs == nil {
		offs = map[TopicPartition]*txnOffset{}
		g.pending[id] = offs
	}
	for _, cm := range commits {
		g.txnSeq++
		offs[cm.TopicPartition()] = &txnOffset{om: cm.OffsetAndMetadata(), seq: g.txnSeq}
	}
}

// completePendingLocked commits (commit set) or drops producer id's
// pending offsets. A committed one becomes the partition's offset unless
// the partition's offset was set after it was written.
func (g *groupState) completePendingLocked(id int64, commit bool) {
	offs := g.pending[id]
	delete(g.pending, id)
	if !commit {
		return
	}
	// Each partition on its own: what one sets and supersedes is of its
	// partition only, so the order does not matter.
	for tp, t := range offs {
		if !t.superseded {
			g.offsets[tp] = t.om
			g.supersedeLocked(tp, t.seq)
		}
	}
}

// setOffsetLocked makes om the committed offset of tp: the offsets of tp
// pending in transactions, all written before, no longer take effect when
// their transactions commit.
func (g *groupState) setOffsetLocked(tp TopicPartition, om OffsetAndMetadata) {
	g.offsets[tp] = om
	g.supersedeLocked(tp, g.txnSeq+1)
}

// supersedeLocked marks the offsets of tp pending in transactions that
// were written before seq as superseded.
func (g *groupState) supersedeLocked(tp TopicPartition, seq uint64) {
	for _, offs := range g.pending {
		if t := offs[tp]; t != nil && t.seq < seq {
			t.superseded = true
		}
	}
}

// deleteOffsetLocked deletes the committed offset of tp and the offsets
// of tp pending in transactions (as Kafka's GroupMetadata.removeOffsets).
func (g *groupState) deleteOffsetLocked(tp TopicPartition) {
	delete(g.offsets, tp)
	for _, offs := range g.pending {
		delete(offs, tp)
	}
}

// hasLocked reports whether g has a committed or pending offset for tp.
func (g *groupState) hasLocked(tp TopicPartition) bool {
	_, ok := g.offsets[tp]
	return ok || g.pendingLocked(tp)
}

// pendingLocked reports whether g has an offset for tp pending in a
// transaction.
func (g *groupState) pendingLocked(tp TopicPartition) bool {
	for _, offs := range g.pending {
		if _, ok := offs[tp]; ok {
			return true
		}
	}
	return false
}

// partsLocked returns, sorted, the partitions whose committed offset, or
// an offset pending in a transaction, keep accepts.
func (g *groupState) partsLocked(keep func(TopicPartition, OffsetAndMetadata) bool) []TopicPartition {
	set := map[TopicPartition]struct{}{}
	for tp, om := range g.offsets {
		if keep(tp, om) {
			set[tp] = struct{}{}
		}
	}
	for _, offs := range g.pending {
		for tp, t := range offs {
			if keep(tp, t.om) {
				set[tp] = struct{}{}
			}
		}
	}
	return slices.SortedFunc(maps.Keys(set), TopicPartition.Compare)
}
