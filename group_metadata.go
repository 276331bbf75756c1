package strata

import (
	"errors"
	"fmt"

	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
)

// GroupMetadata is a consumer group's membership as of its last
// rebalance, as the store persists it in __consumer_offsets in Kafka's
// format (a GroupMetadata record, key version 2): the protocol, the
// generation, and each member with its client, subscription and
// assignment. DescribeGroup reads it back.
type GroupMetadata = group.GroupMetadata

// GroupMemberMetadata is one member in a GroupMetadata.
type GroupMemberMetadata = group.MemberMetadata

// The client id and host the group metadata records for the store's own
// consumers (Consumer, HeartbeatGroup), which have neither.
const (
	inProcessClientID   = "strata"
	inProcessClientHost = "localhost"
)

// AppendMetadata appends a group's metadata record (a tombstone for nil
// md) to the offsets topic, one batch; a read-only store writes nothing.
// A failure is logged: membership is a description, and the next
// rebalance writes it again. While the store closes it appends to the
// topic as long as the topic is open (Close's LeaveAll) and creates none;
// what a closing store cannot write is not logged: the next Open records
// the group without its members (endStaleMembership).
func (l offsetLog) AppendMetadata(groupName string, md *GroupMetadata) {
	if l.s.readOnly != nil {
		return // the owner's record is the group's; this store only reads
	}
	var p *partition.Partition
	var err error
	if l.s.closed.Load() {
		var t *topic.Topic
		if t, err = l.s.lookupTopic(ConsumerOffsetsTopic); err == nil {
			p, err = t.Partition(0)
		}
	} else {
		p, err = l.s.offsetsPartition()
	}
	if err == nil {
		var r Record
		r.Key, r.Value = group.EncodeGroupMetadata(groupName, md)
		_, err = p.Append([]Record{r})
	}
	if err != nil && !l.s.closed.Load() {
		l.s.opts.Logger.Warn("strata: could not record the membership of a consumer group", "group", groupName, "err", err)
	}
}

// replayMetadata replays r, a record of __consumer_offsets that is not an
// offset commit, if it is a group's metadata; the records of KIP-848 that
// Kafka writes are skipped, and a damaged one is logged.
func (s *Store) replayMetadata(r Record) {
	name, md, err := group.DecodeGroupMetadata(r.Key, r.Value)
	switch {
	case err == nil:
		s.groups.ReplayMetadata(name, md)
	case !errors.Is(err, group.ErrNotGroupMetadata):
		s.opts.Logger.Warn("strata: skipping a damaged group metadata record", "offset", r.Offset, "err", err)
	}
}

// endStaleMembership records, once Open has replayed the groups, that the
// members the log still lists (those of the process that held the
// directory before, which did not close its consumers) are gone.
func (s *Store) endStaleMembership() {
	if n := s.groups.EndStaleMembership(); n > 0 {
		s.opts.Logger.Info("strata: consumer groups whose members did not leave before the store closed are empty now", "groups", n)
	}
}

// PublishGroup records md as the membership of a consumer group whose
// members the store does not manage, for DescribeGroup and Kafka's tools:
// package broker calls it for a classic group of Kafka clients each time
// a generation's assignment is complete and when the group loses its
// last member, as Kafka's coordinator writes them. It appends a
// GroupMetadata record to __consumer_offsets. A group with Consumers in
// the process (or members of HeartbeatGroup) refuses it with
// ErrGroupActive, as the store records theirs itself; an empty or
// overlong group id is ErrInvalidGroup; a ReadOnly store ErrReadOnly.
// The store keeps md: the caller must not modify it afterwards.
func (s *Store) PublishGroup(groupName string, md *GroupMetadata) (err error) {
	defer wrapErr(&err)
	if s.closed.Load() {
		return ErrClosed
	}
	if err := s.checkWritable("publish group"); err != nil {
		return err
	}
	if md == nil {
		return fmt.Errorf("strata: publishing no metadata for group %q: %w", groupName, ErrInvalidConfig)
	}
	err = s.groups.PublishMetadata(groupName, md)
	if errors.Is(err, group.ErrBadRecord) {
		return fmt.Errorf("strata: %w: %w", err, ErrInvalidConfig)
	}
	return err
}
