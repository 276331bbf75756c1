package group

import (
	"fmt"
	"testing"
)

// nullLog is an OffsetLog that only counts, to measure the Coordinator
// alone.
type nullLog struct{ commits int }

// Append implements OffsetLog.
func (l *nullLog) Append(commits []Commit) error {
	l.commits += len(commits)
	return nil
}

// BenchmarkCommit measures a member committing n offsets of partitions it
// owns.
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("offsets=%d", n), func(b *testing.B) {
			clock := newClock()
			c := NewCoordinator(&nullLog{}, &Options{Now: clock.Now, Partitions: func(string) int { return n }})
			ref, err := c.Join("g", []string{"t"})
			if err != nil {
				b.Fatal(err)
			}
			res, err := c.Sync("g", ref.MemberID)
			if err != nil || len(res.Owned) != n {
				b.Fatal(err, res)
			}
			offsets := map[TopicPartition]OffsetAndMetadata{}
			for _, p := range res.Owned {
				offsets[p] = OffsetAndMetadata{Offset: 12345, Metadata: "m"}
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Commit("g", ref, offsets); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRebalance measures a fifth member joining four that share 64
// partitions, until every member owns its new share: the join, and rounds
// of Sync and Revoked by every member. (The fifth member's leave, which
// restores the group between iterations, is not timed.)
func BenchmarkRebalance(b *testing.B) {
	for _, a := range assignors {
		b.Run(fmt.Sprintf("assignor=%s/members=4/partitions=64", a.Name()), func(b *testing.B) {
			clock := newClock()
			c := NewCoordinator(nil, &Options{Now: clock.Now, Assignor: a, Partitions: func(string) int { return 64 }})
			var ids []string
			for range 4 {
				ref, err := c.Join("g", []string{"t"})
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, ref.MemberID)
			}
			converge(b, c, ids)
			b.ReportAllocs()
			for b.Loop() {
				ref, err := c.Join("g", []string{"t"})
				if err != nil {
					b.Fatal(err)
				}
				converge(b, c, append(ids, ref.MemberID))

				b.StopTimer()
				if err := c.Leave("g", ref.MemberID); err != nil {
					b.Fatal(err)
				}
				converge(b, c, ids)
				b.StartTimer()
			}
		})
	}
}

// converge runs the protocol for the members ids of group "g" until a
// round of Sync and Revoked changes nothing.
func converge(b *testing.B, c *Coordinator, ids []string) {
	for changed := true; changed; {
		changed = false
		for _, id := range ids {
			res, err := c.Sync("g", id)
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Revoke) > 0 {
				if err := c.Revoked("g", id, res.Revoke); err != nil {
					b.Fatal(err)
				}
			}
			changed = changed || len(res.Assign) > 0 || len(res.Revoke) > 0
		}
	}
}
