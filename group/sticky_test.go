package group

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// four is Kafka's sticky example: three members subscribed to t0..t3 of
// two partitions each.
var (
	fourTopics = []string{"t0", "t1", "t2", "t3"}
	four       = map[string]int{"t0": 2, "t1": 2, "t2": 2, "t3": 2}
)

func TestSticky(t *testing.T) {
	tests := []struct {
		name       string
		members    []Member
		partitions map[string]int
		want       Assignment
	}{
		{
			name: "kafka example: a member leaves, the others keep everything",
			members: []Member{
				{ID: "C0", Topics: fourTopics, Owned: tps("t0-0 t1-1 t3-0"), Generation: 1},
				{ID: "C2", Topics: fourTopics, Owned: tps("t1-0 t2-1"), Generation: 1},
			},
			partitions: four,
			// The orphans t0-1 t2-0 t3-1 of C1 fill both up to four; this
			// is also the result Kafka's javadoc gives.
			want: Assignment{
				"C0": tps("t0-0 t1-1 t2-0 t3-0"),
				"C2": tps("t0-1 t1-0 t2-1 t3-1"),
			},
		},
		{
			name: "kafka example: unequal subscriptions from scratch",
			members: []Member{
				{ID: "C0", Topics: []string{"t0"}},
				{ID: "C1", Topics: []string{"t0", "t1"}},
				{ID: "C2", Topics: []string{"t0", "t1", "t2"}},
			},
			partitions: map[string]int{"t0": 1, "t1": 2, "t2": 3},
			want: Assignment{
				"C0": tps("t0-0"),
				"C1": tps("t1-0 t1-1"),
				"C2": tps("t2-0 t2-1 t2-2"),
			},
		},
		{
			name: "kafka example: unequal subscriptions after C0 leaves",
			members: []Member{
				{ID: "C1", Topics: []string{"t0", "t1"}, Owned: tps("t1-0 t1-1"), Generation: 1},
				{ID: "C2", Topics: []string{"t0", "t1", "t2"}, Owned: tps("t2-0 t2-1 t2-2"), Generation: 1},
			},
			partitions: map[string]int{"t0": 1, "t1": 2, "t2": 3},
			want: Assignment{
				"C1": tps("t0-0 t1-0 t1-1"),
				"C2": tps("t2-0 t2-1 t2-2"),
			},
		},
		{
			name: "a member joins: only one partition moves",
			members: []Member{
				{ID: "C0", Topics: []string{"t0"}, Owned: tps("t0-0 t0-1"), Generation: 7},
				{ID: "C1", Topics: []string{"t0"}, Owned: tps("t0-2 t0-3"), Generation: 7},
				{ID: "C2", Topics: []string{"t0"}, Owned: tps("t0-4 t0-5"), Generation: 7},
				{ID: "C3", Topics: []string{"t0"}},
			},
			partitions: map[string]int{"t0": 6},
			want: Assignment{
				"C0": tps("t0-0 t0-1"),
				"C1": tps("t0-2 t0-3"),
				"C2": tps("t0-4"),
				"C3": tps("t0-5"),
			},
		},
		{
			name: "an over-full member gives up its highest partitions",
			members: []Member{
				{ID: "C0", Topics: []string{"t0"}, Owned: tps("t0-0 t0-1 t0-2 t0-3 t0-4"), Generation: 2},
				{ID: "C1", Topics: []string{"t0"}},
			},
			partitions: map[string]int{"t0": 5},
			want:       Assignment{"C0": tps("t0-0 t0-1 t0-2"), "C1": tps("t0-3 t0-4")},
		},
		{
			name: "conflicting claims: the higher generation wins",
			members: []Member{
				{ID: "C0", Topics: []string{"t0"}, Owned: tps("t0-0 t0-1"), Generation: 4},
				{ID: "C1", Topics: []string{"t0"}, Owned: tps("t0-0"), Generation: 5},
			},
			partitions: map[string]int{"t0": 4},
			want:       Assignment{"C0": tps("t0-1 t0-2"), "C1": tps("t0-0 t0-3")},
		},
		{
			name: "conflicting claims: the higher generation wins, either way round",
			members: []Member{
				{ID: "C0", Topics: []string{"t0"}, Owned: tps("t0-0 t0-1"), Generation: 5},
				{ID: "C1", Topics: []string{"t0"}, Owned: tps("t0-0"), Generation: 4},
			},
			partitions: map[string]int{"t0": 4},
			want:       Assignment{"C0": tps("t0-0 t0-1"), "C1": tps("t0-2 t0-3")},
		},
		{
			name: "conflicting claims at the same generation are both void",
			members: []Member{
				{ID: "C0", Topics: []string{"t0"}, Owned: tps("t0-2"), Generation: 5},
				{ID: "C1", Topics: []string{"t0"}, Owned: tps("t0-2 t0-3"), Generation: 5},
				{ID: "C2", Topics: []string{"t0"}, Owned: tps("t0-2"), Generation: 3},
			},
			partitions: map[string]int{"t0": 4},
			// Nobody keeps t0-2 (C2's older claim does not revive); free
			// partitions go in member order, lowest first.
			want: Assignment{"C0": tps("t0-0 t0-1"), "C1": tps("t0-3"), "C2": tps("t0-2")},
		},
		{
			name: "claims on unsubscribed, deleted and out-of-range partitions are dropped",
			members: []Member{
				{ID: "C0", Topics: []string{"t0"}, Owned: tps("t1-0 t9-0 t0-7 t0-1 t0-1"), Generation: 9},
				{ID: "C1", Topics: both, Owned: tps("t1-0"), Generation: 1},
			},
			partitions: map[string]int{"t0": 2, "t1": 2},
			// C0's newer claim on t1-0 is void (it left t1), so C1's stands.
			want: Assignment{"C0": tps("t0-0 t0-1"), "C1": tps("t1-0 t1-1")},
		},
		{
			name: "balance comes before stickiness",
			members: []Member{
				{ID: "B", Topics: []string{"t1", "t2"}, Owned: tps("t2-0 t2-1"), Generation: 1},
				{ID: "C", Topics: []string{"t2"}, Owned: tps("t2-2 t2-3"), Generation: 1},
			},
			partitions: map[string]int{"t1": 2, "t2": 4},
			// A (t1 only) left: B must take t1, so to balance 3 against 3
			// it hands one of its t2 partitions to C.
			want: Assignment{"B": tps("t1-0 t1-1 t2-0"), "C": tps("t2-1 t2-2 t2-3")},
		},
		{
			name: "unequal subscriptions keep what balance allows",
			members: []Member{
				{ID: "C0", Topics: []string{"t0"}, Owned: tps("t0-3"), Generation: 1},
				{ID: "C1", Topics: both, Owned: tps("t0-0 t0-1 t1-0"), Generation: 1},
				{ID: "C2", Topics: []string{"t1"}, Owned: tps("t1-1"), Generation: 1},
			},
			partitions: map[string]int{"t0": 4, "t1": 2},
			want: Assignment{
				"C0": tps("t0-2 t0-3"),
				"C1": tps("t0-0 t0-1"),
				"C2": tps("t1-0 t1-1"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Sticky().Assign(tt.members, tt.partitions)
			require.Equal(t, tt.want, got)
			requireValid(t, tt.members, tt.partitions, got)
		})
	}
}

func TestStickyFromScratchIsBalanced(t *testing.T) {
	tests := []struct {
		name       string
		members    int
		partitions map[string]int
		wantCounts []int
	}{
		{"kafka example: three members, four topics of two", 3, four, []int{3, 3, 2}},
		{"two members, two topics of three", 2, map[string]int{"t0": 3, "t1": 3}, []int{3, 3}},
		{"one topic, uneven", 4, map[string]int{"t0": 10}, []int{3, 3, 2, 2}},
		{"more members than partitions", 5, map[string]int{"t0": 2, "t1": 1}, []int{1, 1, 1, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var topics []string
			for topic := range tt.partitions {
				topics = append(topics, topic)
			}
			members := make([]Member, tt.members)
			for i := range members {
				members[i] = Member{ID: "C" + string(rune('0'+i)), Topics: topics}
			}
			got := Sticky().Assign(members, tt.partitions)
			requireValid(t, members, tt.partitions, got)
			require.ElementsMatch(t, tt.wantCounts, counts(members, got))
		})
	}
}

func TestStickyMemberJoins(t *testing.T) {
	// Two members with five partitions each; a third joins. Balance needs
	// 4-3-3, so one old member gives up one partition and the other two.
	members := []Member{
		{ID: "C0", Topics: []string{"t0"}, Owned: tps("t0-0 t0-1 t0-2 t0-3 t0-4"), Generation: 3},
		{ID: "C1", Topics: []string{"t0"}, Owned: tps("t0-5 t0-6 t0-7 t0-8 t0-9"), Generation: 3},
		{ID: "C2", Topics: []string{"t0"}},
	}
	partitions := map[string]int{"t0": 10}
	got := Sticky().Assign(members, partitions)
	requireValid(t, members, partitions, got)
	require.ElementsMatch(t, []int{4, 3, 3}, counts(members, got))
	k := kept(members, got)
	require.Equal(t, 7, k["C0"]+k["C1"], "only the three partitions balance requires move")
	require.Len(t, got["C2"], 3)
}

func TestStickyStable(t *testing.T) {
	members := []Member{
		{ID: "C0", Topics: fourTopics}, {ID: "C1", Topics: fourTopics}, {ID: "C2", Topics: fourTopics},
	}
	first := Sticky().Assign(members, four)
	again := Sticky().Assign(withOwned(members, first, 1), four)
	require.Equal(t, first, again)
}
