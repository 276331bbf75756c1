package strata

import "github.com/stratalog/strata/group"

// Assignor shares the partitions of the topics a consumer group subscribes
// to among its consumers (Options.Assignor): RangeAssignor, the default,
// RoundRobinAssignor or StickyAssignor, which are Kafka's. Package group
// defines the interface, for an assignor of one's own.
type Assignor = group.Assignor

// RangeAssignor returns Kafka's RangeAssignor ("range"), the default: each
// topic on its own, every consumer takes a contiguous run of its
// partitions, so partitions of the same number stay on the same consumer
// (what joins of co-partitioned topics want).
func RangeAssignor() Assignor { return group.Range() }

// RoundRobinAssignor returns Kafka's RoundRobinAssignor ("roundrobin"):
// every subscribed partition, in (topic, partition) order, is dealt to the
// consumers in turn.
func RoundRobinAssignor() Assignor { return group.RoundRobin() }

// StickyAssignor returns Kafka's StickyAssignor ("sticky"): as balanced as
// the subscriptions allow, then keeping as many partitions where they were
// as it can, so that a rebalance moves only what must move.
func StickyAssignor() Assignor { return group.Sticky() }
