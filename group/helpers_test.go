package group

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// tps parses partitions written as in Kafka ("t0-0 t0-1 t1-2") into a
// non-nil slice.
func tps(s string) []TopicPartition {
	out := []TopicPartition{}
	for _, f := range strings.Fields(s) {
		i := strings.LastIndexByte(f, '-')
		n, err := strconv.Atoi(f[i+1:])
		if i < 0 || err != nil {
			panic("bad partition " + f)
		}
		out = append(out, TopicPartition{Topic: f[:i], Partition: n})
	}
	return out
}

// subscribed reports whether m subscribes to topic.
func subscribed(m Member, topic string) bool { return slices.Contains(m.Topics, topic) }

// requireValid checks the rules every assignor obeys: an entry per member,
// sorted lists, partitions that exist, only subscribed members, and every
// partition of a subscribed topic assigned exactly once.
func requireValid(t testing.TB, members []Member, partitions map[string]int, a Assignment) {
	t.Helper()
	require.Len(t, a, len(members), "one entry per member")
	owner := map[TopicPartition]string{}
	for _, m := range members {
		list, ok := a[m.ID]
		require.True(t, ok, "member %s has no entry", m.ID)
		require.NotNil(t, list, "member %s has a nil list", m.ID)
		require.True(t, slices.IsSortedFunc(list, TopicPartition.Compare), "member %s: unsorted %v", m.ID, list)
		for _, tp := range list {
			require.True(t, subscribed(m, tp.Topic), "member %s got %s without subscribing", m.ID, tp)
			require.True(t, tp.Partition >= 0 && tp.Partition < partitions[tp.Topic], "member %s got %s, which does not exist", m.ID, tp)
			prev, dup := owner[tp]
			require.False(t, dup, "%s given to %s and %s", tp, prev, m.ID)
			owner[tp] = m.ID
		}
	}
	for topic, n := range partitions {
		wanted := slices.ContainsFunc(members, func(m Member) bool { return subscribed(m, topic) })
		for q := range n {
			tp := TopicPartition{Topic: topic, Partition: q}
			_, ok := owner[tp]
			require.Equal(t, wanted, ok, "%s assigned=%v, subscribed by someone=%v", tp, ok, wanted)
		}
	}
}

// counts returns the number of partitions of each member, in members order.
func counts(members []Member, a Assignment) []int {
	out := make([]int, len(members))
	for i, m := range members {
		out[i] = len(a[m.ID])
	}
	return out
}

// spread returns max − min of the counts.
func spread(c []int) int { return slices.Max(c) - slices.Min(c) }

// withOwned returns a copy of members owning what a gives them, at
// generation gen.
func withOwned(members []Member, a Assignment, gen int) []Member {
	out := slices.Clone(members)
	for i := range out {
		out[i].Owned = slices.Clone(a[out[i].ID])
		out[i].Generation = gen
	}
	return out
}

// kept counts the partitions of each member (by ID) that it owned before
// and still has.
func kept(members []Member, a Assignment) map[string]int {
	out := map[string]int{}
	for _, m := range members {
		for _, tp := range a[m.ID] {
			if slices.Contains(m.Owned, tp) {
				out[m.ID]++
			}
		}
	}
	return out
}

// assignors lists every assignor for tests that apply to all of them.
var assignors = []Assignor{Range(), RoundRobin(), Sticky()}

// both subscribes to t0 and t1.
var both = []string{"t0", "t1"}
