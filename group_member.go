package strata

import (
	"fmt"
	"slices"

	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/topic"
)

// GroupHeartbeat is one heartbeat of a group member whose consumer runs
// outside the process and reports what it holds, as a Kafka client of
// KIP-848's consumer group protocol does (package broker serves them):
// see Store.HeartbeatGroup.
type GroupHeartbeat struct {
	// MemberID is the id an earlier HeartbeatGroup returned; "" joins the
	// group as a new member.
	MemberID string
	// Topics is the subscription: required to join, nil otherwise to keep
	// the last one. A change rebalances the group.
	Topics []string
	// Owned lists every partition the consumer holds now: those it held
	// and does not list are given back, for their new owners to receive.
	// Nil (not an empty list) means unchanged: nothing is given back. A
	// consumer stops fetching and commits a partition before it leaves it
	// out.
	Owned []TopicPartition
	// ClientID and ClientHost name the consumer's client (Kafka's
	// client.id, and its address as Kafka writes it, "/10.0.0.7") in the
	// group's recorded membership (DescribeGroup), when the heartbeat
	// joins; "" if unknown.
	ClientID, ClientHost string
}

// GroupAssignment is what HeartbeatGroup tells a member.
type GroupAssignment struct {
	// MemberID is the member's id, to send in its next heartbeats.
	MemberID string
	// Generation is the group's generation, which the member's commits
	// (CommitAsMember) must carry until its next heartbeat.
	Generation int
	// Assigned lists the partitions the member may hold from now on,
	// sorted: those it owns less those it is to give back, and those
	// newly handed to it. A partition it holds and is not listed is to be
	// given back (its commits still count until then); a partition of its
	// share that another member still holds is listed once that member
	// gave it back.
	Assigned []TopicPartition
	// Revoking lists the partitions the member holds and is to give
	// back, sorted; nil if none. Its commits of them count until a
	// heartbeat no longer lists them in Owned.
	Revoking []TopicPartition
}

// HeartbeatGroup joins a consumer group, or heartbeats a member of one,
// for a consumer outside the process: it shares the group's partitions
// with the store's own Consumers of the group and the other members, in
// the same incremental rebalance (a partition is never handed to a member
// before its previous owner gave it back). A member that does not
// heartbeat for Options.SessionTimeout is evicted, and so is one that
// holds a partition it is to give back for 5 minutes.
//
// Topics must be valid names of topics that are not internal
// (ErrInvalidTopic, ErrReservedTopic); they need not exist yet. A member
// that left or was evicted gets ErrFenced, an id the group never issued
// group.ErrUnknownMember; a group claimed by
// Kafka's classic protocol (ClaimGroup) refuses a join with
// ErrGroupClaimed.
func (s *Store) HeartbeatGroup(groupName string, hb GroupHeartbeat) (_ GroupAssignment, err error) {
	if err := s.checkWritable("join group"); err != nil {
		return GroupAssignment{}, err
	}
	defer wrapErr(&err)
	if s.closed.Load() {
		return GroupAssignment{}, ErrClosed
	}
	for _, name := range hb.Topics {
		if err := topic.ValidateName(name); err != nil {
			return GroupAssignment{}, fmt.Errorf("strata: member of group %q: %w", groupName, err)
		}
		if topic.IsInternal(name) {
			return GroupAssignment{}, fmt.Errorf("strata: member of group %q subscribes to %q: %w", groupName, name, ErrReservedTopic)
		}
	}
	id := hb.MemberID
	switch {
	case id == "":
		ref, err := s.groups.JoinClient(groupName, hb.Topics, hb.ClientID, hb.ClientHost)
		if err != nil {
			return GroupAssignment{}, fmt.Errorf("strata: joining group %q: %w", groupName, err)
		}
		id = ref.MemberID
	case hb.Topics != nil:
		if err := s.groups.Subscribe(groupName, id, hb.Topics); err != nil {
			return GroupAssignment{}, err
		}
	}
	if hb.Owned != nil && hb.MemberID != "" {
		if err := s.groups.Release(groupName, id, hb.Owned); err != nil {
			return GroupAssignment{}, err
		}
	}
	res, err := s.groups.Sync(groupName, id)
	if err != nil {
		return GroupAssignment{}, err
	}
	assigned := make([]TopicPartition, 0, len(res.Owned))
	for _, tp := range res.Owned {
		if _, revoke := slices.BinarySearchFunc(res.Revoke, tp, TopicPartition.Compare); !revoke {
			assigned = append(assigned, tp)
		}
	}
	return GroupAssignment{MemberID: id, Generation: res.Generation, Assigned: assigned, Revoking: res.Revoke}, nil
}

// LeaveGroup takes a member that HeartbeatGroup joined out of its group:
// its partitions go to the others at once. It fails like HeartbeatGroup
// for a member that is gone or unknown.
func (s *Store) LeaveGroup(groupName, memberID string) (err error) {
	if err := s.checkWritable("leave group"); err != nil {
		return err
	}
	defer wrapErr(&err)
	if s.closed.Load() {
		return ErrClosed
	}
	return s.groups.Leave(groupName, memberID)
}

// CommitAsMember commits offsets (the next offset to read, and metadata)
// for partitions that a member HeartbeatGroup joined owns, at the
// generation of its last heartbeat. A partition it does not own is
// ErrNotOwner; another generation, or a member that left or was evicted,
// ErrFenced; an offset outside the partition's [start, end],
// ErrOffsetOutOfRange. Any error commits nothing.
func (s *Store) CommitAsMember(groupName, memberID string, generation int, offsets map[TopicPartition]OffsetAndMetadata) (err error) {
	if err := s.checkWritable("commit"); err != nil {
		return err
	}
	defer wrapErr(&err)
	if s.closed.Load() {
		return ErrClosed
	}
	now := s.opts.Now()
	commits := make(map[TopicPartition]OffsetAndMetadata, len(offsets))
	for tp, om := range offsets {
		id, err := s.checkCommit(tp.Topic, tp.Partition, om.Offset)
		if err != nil {
			return err
		}
		commits[tp] = OffsetAndMetadata{Offset: om.Offset, Metadata: om.Metadata, CommitTime: now, TopicID: id}
	}
	return s.groups.Commit(groupName, group.MemberRef{MemberID: memberID, Generation: generation}, commits)
}
