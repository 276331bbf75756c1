package group

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRoundRobin(t *testing.T) {
	tests := []struct {
		name       string
		members    []Member
		partitions map[string]int
		want       Assignment
	}{
		{
			name:       "kafka example: two members, two topics of three",
			members:    []Member{{ID: "C1", Topics: both}, {ID: "C0", Topics: both}},
			partitions: map[string]int{"t0": 3, "t1": 3},
			want: Assignment{
				"C0": tps("t0-0 t0-2 t1-1"),
				"C1": tps("t0-1 t1-0 t1-2"),
			},
		},
		{
			name: "kafka example: unequal subscriptions skip members",
			members: []Member{
				{ID: "C0", Topics: []string{"t0"}},
				{ID: "C1", Topics: []string{"t0", "t1"}},
				{ID: "C2", Topics: []string{"t0", "t1", "t2"}},
			},
			partitions: map[string]int{"t0": 1, "t1": 2, "t2": 3},
			want: Assignment{
				"C0": tps("t0-0"),
				"C1": tps("t1-0"),
				"C2": tps("t1-1 t2-0 t2-1 t2-2"),
			},
		},
		{
			name:       "the deal resumes after the member that took the partition",
			members:    []Member{{ID: "C0", Topics: both}, {ID: "C1", Topics: []string{"t1"}}},
			partitions: map[string]int{"t0": 2, "t1": 2},
			want: Assignment{
				"C0": tps("t0-0 t0-1 t1-1"),
				"C1": tps("t1-0"),
			},
		},
		{
			name: "idle members when members outnumber partitions",
			members: []Member{
				{ID: "C0", Topics: both}, {ID: "C1", Topics: both}, {ID: "C2", Topics: both},
				{ID: "C3", Topics: both},
			},
			partitions: map[string]int{"t0": 2, "t1": 1},
			want:       Assignment{"C0": tps("t0-0"), "C1": tps("t0-1"), "C2": tps("t1-0"), "C3": {}},
		},
		{
			name: "static members first, by instance id",
			members: []Member{
				{ID: "a-dynamic", Topics: []string{"t0"}},
				{ID: "z-static", InstanceID: "host-2", Topics: []string{"t0"}},
				{ID: "m-static", InstanceID: "host-1", Topics: []string{"t0"}},
			},
			partitions: map[string]int{"t0": 5},
			want: Assignment{
				"m-static":  tps("t0-0 t0-3"),
				"z-static":  tps("t0-1 t0-4"),
				"a-dynamic": tps("t0-2"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RoundRobin().Assign(tt.members, tt.partitions)
			require.Equal(t, tt.want, got)
			requireValid(t, tt.members, tt.partitions, got)
		})
	}
}
