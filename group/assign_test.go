package group

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTopicPartition(t *testing.T) {
	require.Equal(t, "orders-3", TopicPartition{Topic: "orders", Partition: 3}.String())
	require.Equal(t, "a-b-12", TopicPartition{Topic: "a-b", Partition: 12}.String())
	require.Equal(t, `partition -1 of topic "orders"`, TopicPartition{Topic: "orders", Partition: -1}.String())
	require.Equal(t, tps("a-b-12 t0-0"), []TopicPartition{{"a-b", 12}, {"t0", 0}})

	tests := []struct {
		name string
		a, b TopicPartition
		want int
	}{
		{"topic first", TopicPartition{"a", 9}, TopicPartition{"b", 0}, -1},
		{"then partition", TopicPartition{"a", 2}, TopicPartition{"a", 10}, -1},
		{"equal", TopicPartition{"a", 2}, TopicPartition{"a", 2}, 0},
		{"greater", TopicPartition{"b", 0}, TopicPartition{"a", 5}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.a.Compare(tt.b))
		})
	}
}

func TestMemberOrder(t *testing.T) {
	members := []Member{
		{ID: "d-2"}, {ID: "s-9", InstanceID: "b"}, {ID: "d-1"}, {ID: "s-1", InstanceID: "c"},
		{ID: "s-5", InstanceID: "a"},
	}
	p := newPlan(members, nil)
	var got []string
	for _, m := range p.members {
		got = append(got, m.ID)
	}
	require.Equal(t, []string{"s-5", "s-9", "s-1", "d-1", "d-2"}, got,
		"static by instance id, then dynamic by member id")
}

func TestNames(t *testing.T) {
	require.Equal(t, "range", Range().Name())
	require.Equal(t, "roundrobin", RoundRobin().Name())
	require.Equal(t, "sticky", Sticky().Name())
}

// TestCommonRules runs the edge cases every assignor shares.
func TestCommonRules(t *testing.T) {
	tests := []struct {
		name       string
		members    []Member
		partitions map[string]int
		want       Assignment
	}{
		{
			name:       "no members",
			partitions: map[string]int{"t0": 3},
			want:       Assignment{},
		},
		{
			name:       "no topics",
			members:    []Member{{ID: "C0", Topics: both}},
			partitions: map[string]int{},
			want:       Assignment{"C0": {}},
		},
		{
			name:       "unknown, empty and negative topics are ignored",
			members:    []Member{{ID: "C0", Topics: []string{"gone", "empty", "neg", "t0"}}},
			partitions: map[string]int{"empty": 0, "neg": -4, "t0": 1},
			want:       Assignment{"C0": tps("t0-0")},
		},
		{
			name:       "topics nobody subscribes to are not assigned",
			members:    []Member{{ID: "C0", Topics: []string{"t0"}}},
			partitions: map[string]int{"t0": 1, "t1": 5},
			want:       Assignment{"C0": tps("t0-0")},
		},
		{
			name:       "duplicate topics in a subscription are harmless",
			members:    []Member{{ID: "C0", Topics: []string{"t0", "t0"}}, {ID: "C1", Topics: []string{"t0"}}},
			partitions: map[string]int{"t0": 2},
			want:       Assignment{"C0": tps("t0-0"), "C1": tps("t0-1")},
		},
		{
			name:       "a member subscribed to nothing is idle",
			members:    []Member{{ID: "C0"}, {ID: "C1", Topics: []string{"t0"}}},
			partitions: map[string]int{"t0": 2},
			want:       Assignment{"C0": {}, "C1": tps("t0-0 t0-1")},
		},
		{
			name: "idle members when members outnumber partitions",
			members: []Member{
				{ID: "C0", Topics: []string{"t0"}}, {ID: "C1", Topics: []string{"t0"}},
				{ID: "C2", Topics: []string{"t0"}}, {ID: "C3", Topics: []string{"t0"}},
			},
			partitions: map[string]int{"t0": 2},
			want:       Assignment{"C0": tps("t0-0"), "C1": tps("t0-1"), "C2": {}, "C3": {}},
		},
		{
			name:       "single member takes everything",
			members:    []Member{{ID: "C0", Topics: both}},
			partitions: map[string]int{"t0": 2, "t1": 1},
			want:       Assignment{"C0": tps("t0-0 t0-1 t1-0")},
		},
	}
	for _, a := range assignors {
		for _, tt := range tests {
			t.Run(a.Name()+"/"+tt.name, func(t *testing.T) {
				got := a.Assign(tt.members, tt.partitions)
				require.Equal(t, tt.want, got)
				requireValid(t, tt.members, tt.partitions, got)
			})
		}
	}
}

func TestDuplicateMemberIDPanics(t *testing.T) {
	members := []Member{
		{ID: "C0", InstanceID: "a", Topics: both},
		{ID: "C1", Topics: both},
		{ID: "C0", InstanceID: "z", Topics: both}, // not adjacent once sorted
	}
	for _, a := range assignors {
		t.Run(a.Name(), func(t *testing.T) {
			require.PanicsWithValue(t, `group: duplicate member id "C0"`, func() {
				a.Assign(members, map[string]int{"t0": 3})
			})
		})
	}
}

// TestInputUntouchedAndOrderFree checks that Assign modifies neither its
// arguments nor depends on the order of members.
func TestInputUntouchedAndOrderFree(t *testing.T) {
	members := []Member{
		{ID: "C2", Topics: []string{"t1", "t0"}, Owned: tps("t1-0 t0-2"), Generation: 3},
		{ID: "C0", Topics: []string{"t0"}, Owned: tps("t0-1 t0-0"), Generation: 3},
		{ID: "C1", InstanceID: "static", Topics: []string{"t1", "t0"}},
	}
	partitions := map[string]int{"t0": 5, "t1": 4, "t2": 1}
	for _, a := range assignors {
		t.Run(a.Name(), func(t *testing.T) {
			before := cloneMembers(members)
			got := a.Assign(members, partitions)
			require.Equal(t, before, members)
			require.Equal(t, map[string]int{"t0": 5, "t1": 4, "t2": 1}, partitions)
			requireValid(t, members, partitions, got)

			reversed := cloneMembers(members)
			slices.Reverse(reversed)
			require.Equal(t, got, a.Assign(reversed, partitions))
			require.Equal(t, got, a.Assign(members, partitions))
		})
	}
}

// cloneMembers deep-copies members.
func cloneMembers(members []Member) []Member {
	out := slices.Clone(members)
	for i := range out {
		out[i].Topics = slices.Clone(out[i].Topics)
		out[i].Owned = slices.Clone(out[i].Owned)
	}
	return out
}
