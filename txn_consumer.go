package strata

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/stratalog/strata/group"
)

// CommitConsumerOffsets adds offsets of partitions that consumer c owns to
// the transaction, as offsets of c's group committed by c: with c's member
// id and the generation c is at now, as Kafka's
// sendOffsetsToTransaction(offsets, consumer.groupMetadata()) sends them
// (KIP-447). Use it, rather than CommitOffsets, when the transaction's
// input comes from a Consumer: a consumer that stalls past the session
// timeout is evicted, another consumer of the group takes its partitions
// and processes their records again, and the stalled one's transaction
// must then not commit.
//
// The offsets are held with the transaction and written at Commit, which
// checks c's identity again under the group's lock, in the same step that
// makes the offsets pending: if c was evicted or left, or has moved to
// another generation since this call (a Poll that joined a rebalance), or
// no longer owns one of the partitions, Commit aborts the transaction and
// fails with ErrFenced (or ErrNotOwner). So call it after the last Poll
// whose records the transaction holds. This call checks c's identity too:
// a consumer already fenced aborts the transaction at once, and the call
// returns the reason, as every later call of the transaction does.
//
// An offset is the next one to read and must lie in the partition's
// [start, end] (ErrOffsetOutOfRange); a partition of a topic c does not
// subscribe to is ErrNotOwner; a closed consumer ErrClosed; a consumer of
// another store, or none, ErrInvalidConfig. These change nothing. A later
// call, or a CommitOffsets, for the same group and partition replaces the
// offset and who commits it.
func (t *Txn) CommitConsumerOffsets(ctx context.Context, c *Consumer, offsets map[TopicPartition]int64) (err error) {
	defer wrapErr(&err)
	if err := orBackground(ctx).Err(); err != nil {
		return err
	}
	if c == nil || c.s != t.s {
		return fmt.Errorf("strata: transaction %q: offsets of a consumer of another store, or of none: %w", t.id, ErrInvalidConfig)
	}
	if err := c.checkOpen(false); err != nil {
		return err
	}
	for tp := range offsets {
		if err := c.checkParts("commit", []TopicPartition{tp}); err != nil {
			return err
		}
	}
	add, err := t.checkOffsets(offsets)
	if err != nil {
		return err
	}
	c.mu.Lock()
	ref := c.ref
	c.mu.Unlock()
	t.mu.Lock()
	err = t.openLocked()
	t.mu.Unlock()
	if err != nil {
		return err
	}
	// No offsets: the identity alone is checked.
	if err := t.s.groups.CommitTxn(c.group, ref, t.pid, t.epoch, nil); err != nil {
		if fenced(err) {
			return t.s.txns.abortFenced(t, err)
		}
		return err
	}
	return t.addOffsets(c.group, ref, add)
}

// fenced reports whether err is the group's refusal of a committer that
// is no longer the member it was, or no longer owns a partition.
func fenced(err error) bool {
	return errors.Is(err, group.ErrFenced) || errors.Is(err, group.ErrUnknownMember) || errors.Is(err, group.ErrNotOwner)
}

// abortFenced aborts t, still open, because its consumer was fenced
// (reason), and returns why it ended.
func (c *txnCoordinator) abortFenced(t *Txn, reason error) error {
	e := t.e
	reason = fmt.Errorf("strata: transaction %q aborted: %w", e.id, reason)
	_ = e.lock(context.Background())
	defer e.unlock()
	if e.live != t {
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.openLocked() // ended meanwhile: why
	}
	if err := c.abortLocked(e, t, reason); err != nil {
		return errors.Join(reason, err)
	}
	return reason
}

// checkOffsets checks offsets as Consumer.CommitOffsets does, and returns
// them stamped with the time and their topics' ids.
func (t *Txn) checkOffsets(offsets map[TopicPartition]int64) (map[TopicPartition]OffsetAndMetadata, error) {
	now := t.s.opts.Now()
	add := make(map[TopicPartition]OffsetAndMetadata, len(offsets))
	for tp, off := range offsets {
		id, err := t.s.checkCommit(tp.Topic, tp.Partition, off)
		if err != nil {
			return nil, err
		}
		add[tp] = OffsetAndMetadata{Offset: off, CommitTime: now, TopicID: id}
	}
	return add, nil
}

// addOffsets holds add, offsets of groupName committed by member ref (the
// zero ref: by no member), in the transaction.
func (t *Txn) addOffsets(groupName string, ref group.MemberRef, add map[TopicPartition]OffsetAndMetadata) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.openLocked(); err != nil {
		return err
	}
	if t.mu.offsets == nil {
		t.mu.offsets = map[string]map[TopicPartition]OffsetAndMetadata{}
	}
	g := t.mu.offsets[groupName]
	if g == nil {
		g = map[TopicPartition]OffsetAndMetadata{}
		t.mu.offsets[groupName] = g
	}
	refs := t.mu.refs[groupName]
	if refs == nil && ref != (group.MemberRef{}) {
		if t.mu.refs == nil {
			t.mu.refs = map[string]map[TopicPartition]group.MemberRef{}
		}
		refs = map[TopicPartition]group.MemberRef{}
		t.mu.refs[groupName] = refs
	}
	for tp, om := range add {
		if _, ok := g[tp]; !ok {
			t.s.txns.held.add(groupName, tp)
		}
		g[tp] = om
		if ref == (group.MemberRef{}) {
			delete(refs, tp)
		} else {
			refs[tp] = ref
		}
	}
	return nil
}

// committers returns the members by whom t commits the partitions of
// offsets, a group's: the zero ref for those of CommitOffsets.
func (t *Txn) committers(groupName string, offsets map[TopicPartition]OffsetAndMetadata) map[group.MemberRef]map[TopicPartition]OffsetAndMetadata {
	t.mu.Lock()
	refs := maps.Clone(t.mu.refs[groupName])
	t.mu.Unlock()
	by := map[group.MemberRef]map[TopicPartition]OffsetAndMetadata{}
	for tp, om := range offsets {
		ref := refs[tp]
		if by[ref] == nil {
			by[ref] = map[TopicPartition]OffsetAndMetadata{}
		}
		by[ref][tp] = om
	}
	return by
}

// sortedRefs returns the refs of by in a fixed order: by member id, then
// generation.
func sortedRefs(by map[group.MemberRef]map[TopicPartition]OffsetAndMetadata) []group.MemberRef {
	return slices.SortedFunc(maps.Keys(by), func(a, b group.MemberRef) int {
		if a.MemberID != b.MemberID {
			if a.MemberID < b.MemberID {
				return -1
			}
			return 1
		}
		return a.Generation - b.Generation
	})
}
