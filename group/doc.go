// Package group holds the parts of Kafka's consumer groups that Strata
// reproduces. So far that is the partition assignors; the group runtime
// (members, generations, committed offsets) builds on them.
//
// # Assignors
//
// The members of a consumer group share the partitions of the topics they
// subscribe to. At every rebalance one party (in Kafka, the group leader)
// runs an [Assignor]: a pure function from the members (their ids,
// subscriptions and, for [Sticky], what they owned before) and the
// partition count of each topic to an [Assignment], the partitions each
// member consumes until the next rebalance.
//
// Every assignor here obeys Kafka's rules:
//
//   - Every partition of a topic that at least one member subscribes to is
//     assigned, to exactly one member: within a group a partition has at
//     most one consumer.
//   - A partition only goes to a member subscribed to its topic.
//   - Members outnumbering the partitions they could take are idle: they
//     get nothing (an empty list; every member has an entry).
//   - Each member's list is sorted by topic, then partition number.
//   - The result depends only on the input, never on the order of the
//     members slice or on map iteration.
//
// # Member order
//
// [Range] and [RoundRobin] walk the members in Kafka's order: static
// members (those with an InstanceID, Kafka's group.instance.id) first,
// sorted by InstanceID, then dynamic members sorted by ID. Static members
// therefore keep their place in the order when they restart with a new
// member id.
//
// # The three assignors
//
// With two members C0 and C1 both subscribed to topics t0 and t1 of three
// partitions each:
//
//	Range       C0 [t0-0 t0-1 t1-0 t1-1]   C1 [t0-2 t1-2]
//	RoundRobin  C0 [t0-0 t0-2 t1-1]        C1 [t0-1 t1-0 t1-2]
//	Sticky      as balanced as RoundRobin, and after a rebalance it keeps
//	            as many of each member's previous partitions as balance allows
//
// [Range] assigns each topic on its own, in contiguous runs, favouring the
// first members. [RoundRobin] deals all partitions in (topic, partition)
// order round the members, skipping those not subscribed. [Sticky] balances
// first and then minimises movement; Member.Owned and Member.Generation
// tell it who owned what.
//
// # Caveats
//
// Member ids, instance ids and topics are compared as Go strings (bytewise,
// that is by Unicode code point). Java compares UTF-16 code units, which
// differs only where one string has a character above U+FFFF and the other
// one in U+E000–U+FFFF at the same position.
//
// Sticky is Kafka's eager StickyAssignor: a partition may move straight
// from one member to another within one rebalance. Kafka's
// CooperativeStickyAssignor, which first revokes and hands partitions out
// in a second rebalance, is not provided. Sticky computes its balance and
// the number of partitions kept exactly (a min-cost flow), where the Java
// assignor searches heuristically; with equal subscriptions both give
// counts within one of each other and keep what the quotas allow. Where
// several assignments are equally good, Sticky may pick a different one
// than the Java client. Rack awareness is not modelled.
package group
