package strata

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/stratalog/strata/group"
)

// ErrUnknownGroup means a consumer group has no members, committed
// offsets or recorded membership in the store.
var ErrUnknownGroup = group.ErrUnknownGroup

// The states DescribeGroup and ListGroups give a group, Kafka's names for
// them (kafka-consumer-groups --state).
const (
	GroupStable = "Stable" // the group has members, sharing its partitions
	GroupEmpty  = "Empty"  // no members; the group has committed offsets or had members
)

// GroupListing is a consumer group in ListGroups.
type GroupListing struct {
	Group        string
	State        string // GroupStable or GroupEmpty
	ProtocolType string // "consumer" for consumer groups, "" if no membership was recorded
	Protocol     string // the assignor of the generation ("range", ...), "" when empty
	Members      int
}

// GroupDescription describes a consumer group, as kafka-consumer-groups
// --describe does: its membership as last recorded in __consumer_offsets
// and, per partition, the committed offset and the lag.
type GroupDescription struct {
	Group        string
	State        string // GroupStable or GroupEmpty
	ProtocolType string // "consumer" for consumer groups, "" if no membership was recorded
	Protocol     string // the assignor of the generation, "" when empty
	Generation   int
	// StateTime is when the membership was recorded (Kafka's
	// currentStateTimestamp); zero if none was.
	StateTime time.Time
	Members   []GroupMemberDescription // sorted by member id
	// Partitions are the partitions the group has a committed offset for
	// or a member is assigned, sorted by topic and partition; partitions
	// of topics that no longer exist are left out.
	Partitions []GroupPartition
}

// GroupMemberDescription is a member in a GroupDescription.
type GroupMemberDescription struct {
	MemberID   string
	InstanceID string // group.instance.id of a static member, "" if none
	ClientID   string // "strata" for the store's own consumers
	ClientHost string // "localhost" for the store's own consumers; "" if unknown
	// Topics is the member's subscription, from its consumer protocol
	// metadata; nil if the group's protocol type is not "consumer".
	Topics []string
	// Assigned are the partitions the generation's assignment gives the
	// member, sorted.
	Assigned []TopicPartition
}

// GroupPartition is one partition in a GroupDescription.
type GroupPartition struct {
	Topic     string
	Partition int
	// Committed is the group's committed offset, -1 if it has none.
	Committed int64
	// EndOffset, Lag and OldestUnconsumed are as in PartitionLag (Lag).
	EndOffset        int64
	Lag              int64
	OldestUnconsumed time.Time
	// MemberID is the member the partition is assigned to, "" if none.
	MemberID string
}

// ListGroups returns every consumer group the store knows, sorted by
// name: those with members, committed offsets or recorded membership.
// On a read-only store it first reads what the owner has appended to
// __consumer_offsets since; damage there is ErrCorrupt.
func (s *Store) ListGroups() (_ []GroupListing, err error) {
	defer wrapErr(&err)
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if err := s.followGroups(); err != nil {
		return nil, err
	}
	var out []GroupListing
	for _, name := range s.groups.Groups() {
		l := GroupListing{Group: name, State: GroupEmpty}
		if md, ok := s.groups.Metadata(name); ok {
			l.ProtocolType, l.Protocol, l.Members = md.ProtocolType, md.Protocol, len(md.Members)
			if l.Members > 0 {
				l.State = GroupStable
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// DescribeGroup describes a consumer group: its membership as last
// recorded in __consumer_offsets (at the group's last rebalance) and, for
// each partition it has a committed offset for or a member is assigned,
// the committed offset, the end offset, the lag and the timestamp of the
// oldest record not consumed (now minus it is how far behind the group
// is). A group the store does not know is ErrUnknownGroup; an empty or
// overlong id ErrInvalidGroup.
//
// The membership is the one recorded, which is what a read-only store
// sees of its owner: on a store that runs the group's consumers, a
// partition that a rebalance moves is listed under its new member while
// the old one still gives it back. On a read-only store DescribeGroup
// first reads what the owner has appended to __consumer_offsets since
// the last call (commits and membership), from where that one stopped;
// damage there is ErrCorrupt, with its file and position.
func (s *Store) DescribeGroup(ctx context.Context, groupName string) (_ GroupDescription, err error) {
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	if s.closed.Load() {
		return GroupDescription{}, ErrClosed
	}
	if err := group.ValidateGroupID(groupName); err != nil {
		return GroupDescription{}, err
	}
	if err := s.followGroups(); err != nil {
		return GroupDescription{}, err
	}
	md, hasMeta := s.groups.Metadata(groupName)
	offsets := s.groups.Offsets(groupName)
	if !hasMeta && len(offsets) == 0 && len(s.groups.Members(groupName)) == 0 {
		return GroupDescription{}, fmt.Errorf("strata: group %q: %w", groupName, ErrUnknownGroup)
	}
	d := GroupDescription{Group: groupName, State: GroupEmpty}
	owner := map[TopicPartition]string{}
	if hasMeta {
		d.ProtocolType, d.Protocol, d.Generation, d.StateTime = md.ProtocolType, md.Protocol, int(md.Generation), md.StateTime
		if len(md.Members) > 0 {
			d.State = GroupStable
		}
		for _, m := range md.Members {
			dm := describeMember(md.ProtocolType, m)
			for _, tp := range dm.Assigned {
				owner[tp] = m.MemberID
			}
			d.Members = append(d.Members, dm)
		}
		slices.SortFunc(d.Members, func(a, b GroupMemberDescription) int { return strings.Compare(a.MemberID, b.MemberID) })
	}
	parts := slices.Collect(maps.Keys(offsets))
	for tp := range owner {
		if _, ok := offsets[tp]; !ok {
			parts = append(parts, tp)
		}
	}
	slices.SortFunc(parts, TopicPartition.Compare)
	iso := s.isolation(0)
	for _, tp := range parts {
		_, p, err := s.topicPartition(tp.Topic, tp.Partition)
		if err != nil {
			continue // a topic deleted (or shrunk) since: not the group's any more
		}
		committed := int64(-1)
		if om, ok := offsets[tp]; ok {
			committed = om.Offset
		}
		pl, err := partitionLag(ctx, p, iso, tp.Partition, committed)
		if err != nil {
			return GroupDescription{}, err
		}
		d.Partitions = append(d.Partitions, GroupPartition{Topic: tp.Topic, Partition: tp.Partition, Committed: pl.Committed,
			EndOffset: pl.EndOffset, Lag: pl.Lag, OldestUnconsumed: pl.OldestUnconsumed, MemberID: owner[tp]})
	}
	return d, nil
}

// describeMember describes m, decoding its consumer protocol bytes when
// the group is a consumer group; bytes that do not decode are left out.
func describeMember(protocolType string, m GroupMemberMetadata) GroupMemberDescription {
	dm := GroupMemberDescription{MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost}
	if protocolType != group.ConsumerProtocolType {
		return dm
	}
	if sub, err := group.DecodeSubscription(m.Subscription); err == nil {
		dm.Topics = sub.Topics
	}
	if parts, _, err := group.DecodeAssignment(m.Assignment); err == nil {
		slices.SortFunc(parts, TopicPartition.Compare)
		dm.Assigned = parts
	}
	return dm
}

// followGroups brings the groups of a read-only store up to what its
// owner has appended to __consumer_offsets since the last call: it
// replays the records from where the last replay stopped to the end the
// store sees now. It does nothing on a store that owns its directory,
// whose coordinator writes the records itself. A damaged batch stops the
// replay there, to be tried again at the next call; until one gets past
// it, followGroups returns the damage (ErrCorrupt), for the calls that
// describe groups to report rather than describe from what came before.
func (s *Store) followGroups() error {
	if s.readOnly == nil || s.closed.Load() {
		return nil
	}
	s.maybeRefreshTopics()
	s.groupsTail.Lock()
	defer s.groupsTail.Unlock()
	t, ok := (*s.topics.Load())[ConsumerOffsetsTopic]
	if !ok {
		return s.groupsTail.err
	}
	p := t.Partitions()[0]
	from := max(s.groupsTail.next, p.StartOffset())
	if from >= p.EndOffset() {
		return s.groupsTail.err
	}
	s.groupsTail.next, s.groupsTail.err = s.replayOffsetsFrom(p, from)
	return s.groupsTail.err
}
