package group

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string // topic name
	Partition int    // partition number, 0 ≤ Partition < the topic's partition count
}

// String returns the partition in Kafka's notation, topic-partition
// ("orders-3"). A negative partition, which no topic has, reads
// `partition -1 of topic "orders"` rather than the ambiguous "orders--1".
func (tp TopicPartition) String() string {
	if tp.Partition < 0 {
		return "partition " + strconv.Itoa(tp.Partition) + " of topic " + strconv.Quote(tp.Topic)
	}
	return tp.Topic + "-" + strconv.Itoa(tp.Partition)
}

// Compare orders partitions by topic (string compare), then by partition
// number, returning -1, 0 or +1. Every list in an [Assignment] is sorted by
// it.
func (tp TopicPartition) Compare(u TopicPartition) int {
	if c := strings.Compare(tp.Topic, u.Topic); c != 0 {
		return c
	}
	return cmp.Compare(tp.Partition, u.Partition)
}

// Member is a group member as an assignor sees it: its subscription and,
// for [Sticky], what it owned before the rebalance.
type Member struct {
	// ID is the member id, unique in the group. Dynamic members are ordered
	// by ID (string compare), as Kafka orders them.
	ID string
	// InstanceID is the optional static id (Kafka's group.instance.id).
	// Static members sort before dynamic ones, and among themselves by
	// InstanceID.
	InstanceID string
	// Topics is the subscription. Topics missing from the partition counts
	// given to Assign (or with no partitions) are ignored; duplicates are
	// harmless.
	Topics []string
	// Owned lists the partitions the member owned in generation Generation.
	// Only Sticky reads it.
	Owned []TopicPartition
	// Generation is the generation of Owned. When several members claim a
	// partition, the claim with the highest generation wins.
	Generation int
}

// Assignment maps a member ID to the partitions assigned to it, each list
// sorted by [TopicPartition.Compare]. Every member given to Assign has an
// entry; an idle member's is an empty, non-nil slice.
type Assignment map[string][]TopicPartition

// Assignor assigns the partitions of the topics members subscribe to.
//
// Assign's partitions maps a topic to its partition count; topics nobody
// subscribes to are left out of the result. For every topic that at least
// one member subscribes to, each of its partitions goes to exactly one
// member, and only to a member subscribed to the topic. Members that find
// nothing left to take get an empty list.
//
// Assign is deterministic: the same members (in any order) and partition
// counts give the same Assignment. It does not modify its arguments, and an
// Assignor is safe for concurrent use. Member IDs must be unique: Assign
// panics if two members share an ID, since the Assignment could not tell
// them apart.
type Assignor interface {
	// Name returns the protocol name Kafka uses for the strategy ("range",
	// "roundrobin", "sticky").
	Name() string
	// Assign returns the assignment of partitions (topic → partition count)
	// to members.
	Assign(members []Member, partitions map[string]int) Assignment
}

// plan is the normalised input every assignor starts from: the members in
// Kafka's order, the subscribed topics that exist, and who subscribes to
// what.
type plan struct {
	members []*Member      // sorted by compareMembers
	topics  []string       // subscribed topics with at least one partition, sorted
	counts  []int          // counts[t] is the partition count of topics[t]
	index   map[string]int // topic name → position in topics
	// subs[m][t] reports whether members[m] subscribes to topics[t].
	subs [][]bool
}

// newPlan sorts the members, checks their IDs and indexes the
// subscriptions. Topics absent from partitions or with a count below one
// do not exist as far as the assignors are concerned.
func newPlan(members []Member, partitions map[string]int) *plan {
	p := &plan{members: make([]*Member, len(members)), index: map[string]int{}}
	for i := range members {
		p.members[i] = &members[i]
	}
	slices.SortFunc(p.members, compareMembers)
	// Equal IDs need not be adjacent (static members sort by InstanceID).
	seen := make(map[string]struct{}, len(members))
	for _, m := range p.members {
		if _, dup := seen[m.ID]; dup {
			panic(fmt.Sprintf("group: duplicate member id %q", m.ID))
		}
		seen[m.ID] = struct{}{}
		for _, t := range m.Topics {
			if partitions[t] > 0 {
				p.index[t] = 0
			}
		}
	}
	p.topics = make([]string, 0, len(p.index))
	for t := range p.index {
		p.topics = append(p.topics, t)
	}
	slices.Sort(p.topics)
	p.counts = make([]int, len(p.topics))
	for i, t := range p.topics {
		p.index[t] = i
		p.counts[i] = partitions[t]
	}
	p.subs = make([][]bool, len(p.members))
	flat := make([]bool, len(p.members)*len(p.topics))
	for i, m := range p.members {
		p.subs[i], flat = flat[:len(p.topics):len(p.topics)], flat[len(p.topics):]
		for _, t := range m.Topics {
			if ti, ok := p.index[t]; ok {
				p.subs[i][ti] = true
			}
		}
	}
	return p
}

// owners returns, for each planned topic, a slice with one entry per
// partition, every entry -1 (unassigned).
func (p *plan) owners() [][]int {
	total := 0
	for _, n := range p.counts {
		total += n
	}
	flat := make([]int, total)
	for i := range flat {
		flat[i] = -1
	}
	out := make([][]int, len(p.topics))
	for t, n := range p.counts {
		out[t], flat = flat[:n:n], flat[n:]
	}
	return out
}

// result turns the owner of each partition (a member index, as returned
// by owners) into an Assignment in which every member has a non-nil,
// sorted entry. The lists share one backing array but are capped, so
// appending to one never overwrites another.
func (p *plan) result(owner [][]int) Assignment {
	n := make([]int, len(p.members))
	total := 0
	for _, part := range owner {
		for _, m := range part {
			if m >= 0 {
				n[m]++
				total++
			}
		}
	}
	backing := make([]TopicPartition, total)
	lists := make([][]TopicPartition, len(p.members))
	for m := range lists {
		lists[m], backing = backing[:0:n[m]], backing[n[m]:]
	}
	// Topics in order, partitions ascending: every list comes out sorted.
	for t, part := range owner {
		for q, m := range part {
			if m >= 0 {
				lists[m] = append(lists[m], TopicPartition{Topic: p.topics[t], Partition: q})
			}
		}
	}
	a := make(Assignment, len(p.members))
	for i, m := range p.members {
		a[m.ID] = lists[i]
	}
	return a
}

// compareMembers is Kafka's member order (AbstractPartitionAssignor
// MemberInfo): static members before dynamic ones, static members by
// instance id, dynamic ones by member id. Ties between equal instance ids
// fall back to the member id so that the order is total.
func compareMembers(a, b *Member) int {
	switch as, bs := a.InstanceID != "", b.InstanceID != ""; {
	case as && bs:
		if c := strings.Compare(a.InstanceID, b.InstanceID); c != 0 {
			return c
		}
	case as:
		return -1
	case bs:
		return 1
	}
	return strings.Compare(a.ID, b.ID)
}
