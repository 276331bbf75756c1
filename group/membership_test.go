package group

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// commitAll commits offset o for every partition in parts.
func commitAll(c *Coordinator, group string, ref MemberRef, parts []TopicPartition, o int64) error {
	offsets := map[TopicPartition]OffsetAndMetadata{}
	for _, p := range parts {
		offsets[p] = om(o)
	}
	return c.Commit(group, ref, offsets)
}

// TestRevokeBeforeAssign walks the protocol step by step: a partition
// moving from A to B reaches B only after A revoked it.
func TestRevokeBeforeAssign(t *testing.T) {
	f := newFixture(map[string]int{"t": 4}, nil)
	a := f.join(t, "g", "t")
	require.Equal(t, MemberRef{MemberID: "g-1", Generation: 1}, a)
	require.Equal(t, 1, f.Generation("g"))

	res := f.sync(t, "g", a.MemberID)
	require.Equal(t, SyncResult{Generation: 1, Assign: tps("t-0 t-1 t-2 t-3"), Owned: tps("t-0 t-1 t-2 t-3")}, res)
	res = f.sync(t, "g", a.MemberID)
	require.Equal(t, SyncResult{Generation: 1, Owned: tps("t-0 t-1 t-2 t-3")}, res, "nothing new")

	b := f.join(t, "g", "t")
	require.Equal(t, MemberRef{MemberID: "g-2", Generation: 2}, b)
	res = f.sync(t, "g", b.MemberID)
	require.Equal(t, SyncResult{Generation: 2, Owned: tps(""), Pending: tps("t-2 t-3")}, res, "A still owns B's share")

	// A has not synced since the rebalance: its generation is still 1, and
	// it may commit with it.
	require.NoError(t, commitAll(f.Coordinator, "g", a, tps("t-0 t-3"), 5))

	res = f.sync(t, "g", a.MemberID)
	require.Equal(t, SyncResult{Generation: 2, Revoke: tps("t-2 t-3"), Owned: tps("t-0 t-1 t-2 t-3")}, res)
	require.ErrorIs(t, commitAll(f.Coordinator, "g", a, tps("t-0"), 6), ErrFenced, "generation 1 is stale now")
	a.Generation = res.Generation
	require.NoError(t, commitAll(f.Coordinator, "g", a, tps("t-2 t-3"), 6), "A commits what it revokes")

	res = f.sync(t, "g", b.MemberID)
	require.Empty(t, res.Assign, "A has not revoked yet")
	requireOwnersDisjoint(t, f.Coordinator, "g")

	require.NoError(t, f.Revoked("g", a.MemberID, tps("t-2 t-3")))
	require.ErrorIs(t, commitAll(f.Coordinator, "g", a, tps("t-2"), 7), ErrNotOwner)
	res = f.sync(t, "g", b.MemberID)
	require.Equal(t, SyncResult{Generation: 2, Assign: tps("t-2 t-3"), Owned: tps("t-2 t-3")}, res)
	b.Generation = res.Generation
	got, _ := f.Committed("g", "t", 3)
	require.Equal(t, int64(6), got.Offset, "B resumes where A stopped")
	requireConverged(t, f, "g")

	// A leaves: its partitions are free at once.
	require.NoError(t, f.Leave("g", a.MemberID))
	require.Equal(t, 3, f.Generation("g"))
	res = f.sync(t, "g", b.MemberID)
	require.Equal(t, SyncResult{Generation: 3, Assign: tps("t-0 t-1"), Owned: tps("t-0 t-1 t-2 t-3")}, res)

	_, err := f.Sync("g", a.MemberID)
	require.ErrorIs(t, err, ErrFenced)
	require.ErrorIs(t, f.Leave("g", a.MemberID), ErrFenced)
	require.ErrorIs(t, f.Revoked("g", a.MemberID, nil), ErrFenced)
	require.ErrorIs(t, f.Subscribe("g", a.MemberID, nil), ErrFenced)
	require.ErrorIs(t, commitAll(f.Coordinator, "g", a, nil, 0), ErrFenced)
}

func TestUnknownMembers(t *testing.T) {
	f := newFixture(map[string]int{"t": 1}, nil)
	f.join(t, "g", "t")
	for _, tt := range []struct{ name, group, id string }{
		{"unknown group", "nope", "nope-1"},
		{"never issued", "g", "g-2"},
		{"zero", "g", "g-0"},
		{"leading zero", "g", "g-01"},
		{"other prefix", "g", "h-1"},
		{"empty", "g", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.Sync(tt.group, tt.id)
			require.ErrorIs(t, err, ErrUnknownMember)
			require.ErrorIs(t, f.Leave(tt.group, tt.id), ErrUnknownMember)
			require.ErrorIs(t, f.Revoked(tt.group, tt.id, nil), ErrUnknownMember)
			require.ErrorIs(t, f.Subscribe(tt.group, tt.id, nil), ErrUnknownMember)
		})
	}
	require.Nil(t, f.Members("nope"))
	require.Zero(t, f.Generation("nope"))
	_, err := f.Join("", nil)
	require.ErrorIs(t, err, ErrInvalidGroup)
}

func TestRevokedRejectsPartitionsNotOwned(t *testing.T) {
	f := newFixture(map[string]int{"t": 2}, nil)
	a := f.join(t, "g", "t")
	f.settle(t, "g")
	require.ErrorIs(t, f.Revoked("g", a.MemberID, tps("t-0 t-5")), ErrNotOwner)
	require.Equal(t, tps("t-0 t-1"), f.Members("g")[0].Owned, "nothing given back")

	// Giving back a partition of its own share is allowed; the next Sync
	// hands it back.
	require.NoError(t, f.Revoked("g", a.MemberID, tps("t-1")))
	require.Equal(t, tps("t-1"), f.sync(t, "g", a.MemberID).Assign)
}

func TestSessionTimeout(t *testing.T) {
	f := newFixture(map[string]int{"t": 4}, nil)
	a := f.join(t, "g", "t")
	b := f.join(t, "g", "t")
	last := f.settle(t, "g")
	a.Generation = last[a.MemberID].Generation
	gen := f.Generation("g")

	// B keeps syncing; A stops. At exactly SessionTimeout A is alive.
	f.clock.Advance(DefaultSessionTimeout / 2)
	f.sync(t, "g", b.MemberID)
	f.clock.Advance(DefaultSessionTimeout / 2)
	require.Len(t, f.Members("g"), 2)
	require.NoError(t, commitAll(f.Coordinator, "g", a, tps("t-0"), 1))

	// One nanosecond later it is evicted by the next call, its
	// partitions are free and its commits fenced.
	f.clock.Advance(time.Nanosecond)
	members := f.Members("g")
	require.Len(t, members, 1)
	require.Equal(t, b.MemberID, members[0].ID)
	require.Equal(t, gen+1, f.Generation("g"))
	require.ErrorIs(t, commitAll(f.Coordinator, "g", a, tps("t-0"), 2), ErrFenced)
	_, err := f.Sync("g", a.MemberID)
	require.ErrorIs(t, err, ErrFenced)
	res := f.sync(t, "g", b.MemberID)
	require.Equal(t, tps("t-0 t-1"), res.Assign)
	require.Equal(t, tps("t-0 t-1 t-2 t-3"), res.Owned)
	got, _ := f.Committed("g", "t", 0)
	require.Equal(t, int64(1), got.Offset, "the fenced commit changed nothing")
}

func TestExpireEvictsInEveryGroup(t *testing.T) {
	f := newFixture(map[string]int{"t": 2}, nil)
	f.join(t, "a", "t")
	f.join(t, "b", "t")
	f.settle(t, "a")
	f.clock.Advance(DefaultSessionTimeout + 1)
	f.Expire()
	for _, name := range []string{"a", "b"} {
		g := f.lookup(name, false)
		g.mu.Lock()
		require.Empty(t, g.members, "group %s", name)
		require.Empty(t, g.owner, "group %s", name)
		g.mu.Unlock()
	}
	require.Empty(t, f.Groups())
}

// TestRebalanceTimeout evicts a member that keeps syncing but never gives
// back what it was told to revoke.
func TestRebalanceTimeout(t *testing.T) {
	for _, revokes := range []bool{false, true} {
		t.Run(map[bool]string{false: "stuck", true: "revokes"}[revokes], func(t *testing.T) {
			f := newFixture(map[string]int{"t": 2}, nil)
			a := f.join(t, "g", "t")
			f.settle(t, "g")
			b := f.join(t, "g", "t")
			res := f.sync(t, "g", a.MemberID)
			require.Equal(t, tps("t-1"), res.Revoke)
			if revokes {
				require.NoError(t, f.Revoked("g", a.MemberID, res.Revoke))
			}
			for elapsed := time.Duration(0); elapsed <= DefaultRebalanceTimeout; elapsed += 10 * time.Second {
				f.sync(t, "g", a.MemberID)
				f.sync(t, "g", b.MemberID)
				f.clock.Advance(10 * time.Second)
			}
			_, err := f.Sync("g", a.MemberID)
			if !revokes {
				require.ErrorIs(t, err, ErrFenced)
				require.Equal(t, tps("t-0 t-1"), f.sync(t, "g", b.MemberID).Owned)
				return
			}
			require.NoError(t, err)
			requireConverged(t, f, "g")
		})
	}
}

func TestGenerationCountsRebalances(t *testing.T) {
	f := newFixture(map[string]int{"t": 2, "u": 2}, nil)
	require.Zero(t, f.Generation("g"))
	a := f.join(t, "g", "t")
	b := f.join(t, "g", "t")
	require.Equal(t, 2, f.Generation("g"))
	f.settle(t, "g")
	require.Equal(t, 2, f.Generation("g"), "syncs alone do not rebalance")
	require.NoError(t, f.Subscribe("g", b.MemberID, []string{"t", "t"}))
	require.Equal(t, 2, f.Generation("g"), "the same subscription")
	require.NoError(t, f.Subscribe("g", b.MemberID, []string{"u", "t"}))
	require.Equal(t, 3, f.Generation("g"))
	f.topics.set("u", 3)
	require.Equal(t, 4, f.sync(t, "g", a.MemberID).Generation, "a partition count changed")
	require.NoError(t, f.Leave("g", a.MemberID))
	require.Equal(t, 5, f.Generation("g"))
	f.clock.Advance(DefaultSessionTimeout + 1)
	require.Nil(t, f.Members("g"))
	require.Equal(t, 6, f.Generation("g"), "the eviction")
	require.Equal(t, MemberRef{MemberID: "g-3", Generation: 7}, f.join(t, "g"), "ids and generations are never reused")
}

func TestIdleMembers(t *testing.T) {
	for _, a := range assignors {
		t.Run(a.Name(), func(t *testing.T) {
			f := newFixture(map[string]int{"t": 2}, a)
			for range 3 {
				f.join(t, "g", "t")
			}
			last := f.settle(t, "g")
			requireConverged(t, f, "g")
			idle := 0
			for _, res := range last {
				if len(res.Owned) == 0 {
					idle++
				}
			}
			require.Equal(t, 1, idle)
		})
	}
}

func TestTopicChanges(t *testing.T) {
	f := newFixture(map[string]int{"t": 2}, nil)
	a := f.join(t, "g", "t", "later")
	b := f.join(t, "g", "t")
	f.settle(t, "g")
	require.Equal(t, tps("t-0"), f.Members("g")[0].Owned)

	// A topic appears and another grows: the next Sync rebalances.
	f.topics.set("later", 2)
	f.topics.set("t", 4)
	f.settle(t, "g")
	requireConverged(t, f, "g")
	require.Equal(t, tps("later-0 later-1 t-0 t-1"), f.Members("g")[0].Owned)

	// A topic disappears: its partitions are revoked.
	f.topics.set("later", 0)
	require.Equal(t, tps("later-0 later-1"), f.sync(t, "g", a.MemberID).Revoke)
	require.NoError(t, f.Revoked("g", a.MemberID, tps("later-0 later-1")))
	f.settle(t, "g")
	requireConverged(t, f, "g")

	// A subscription change moves partitions the same way.
	require.NoError(t, f.Subscribe("g", b.MemberID, nil))
	require.Equal(t, tps("t-2 t-3"), f.sync(t, "g", b.MemberID).Revoke)
	f.settle(t, "g")
	requireConverged(t, f, "g")
	require.Equal(t, tps("t-0 t-1 t-2 t-3"), f.Members("g")[0].Owned)
	require.Empty(t, f.Members("g")[1].Owned)
}

// TestStickyMovesOnlyWhatItMust joins a fifth member to four that share
// 16 partitions: with Sticky, only the partitions the newcomer takes are
// revoked.
func TestStickyMovesOnlyWhatItMust(t *testing.T) {
	f := newFixture(map[string]int{"t": 16}, Sticky())
	for range 4 {
		f.join(t, "g", "t")
	}
	f.settle(t, "g")
	e := f.join(t, "g", "t")
	revoked := 0
	for _, m := range f.Members("g") {
		revoked += len(f.sync(t, "g", m.ID).Revoke)
	}
	last := f.settle(t, "g")
	requireConverged(t, f, "g")
	require.Len(t, last[e.MemberID].Owned, 3)
	require.Equal(t, 3, revoked)
}

// TestTargetIsTheAssignors checks that, for the assignors that ignore
// what members own, the converged ownership is exactly what the assignor
// gives the members.
func TestTargetIsTheAssignors(t *testing.T) {
	counts := map[string]int{"t0": 3, "t1": 5, "t2": 1}
	for _, a := range []Assignor{Range(), RoundRobin()} {
		t.Run(a.Name(), func(t *testing.T) {
			f := newFixture(counts, a)
			subs := [][]string{{"t0", "t1"}, {"t1", "t2"}, {"t0", "t1", "t2"}, {"t1"}}
			var members []Member
			for _, s := range subs {
				ref := f.join(t, "g", s...)
				members = append(members, Member{ID: ref.MemberID, Topics: s})
			}
			f.settle(t, "g")
			want := a.Assign(members, counts)
			for _, m := range f.Members("g") {
				require.Equal(t, want[m.ID], m.Owned, "member %s", m.ID)
			}
		})
	}
}

func TestMembersDescribesTheGroup(t *testing.T) {
	f := newFixture(map[string]int{"t": 2}, nil)
	a := f.join(t, "g", "t", "t", "missing")
	f.clock.Advance(time.Second)
	f.sync(t, "g", a.MemberID)
	require.Equal(t, []MemberInfo{{
		ID:         "g-1",
		Topics:     []string{"missing", "t"},
		Generation: 1,
		Owned:      tps("t-0 t-1"),
		Assigned:   tps("t-0 t-1"),
		LastSeen:   epoch.Add(time.Second),
	}}, f.Members("g"))
}

// TestRelease: a member that reports what it holds gives back the rest,
// which goes to its new owner at the next Sync; unknown partitions in the
// report are ignored, and a fenced member gets ErrFenced.
func TestRelease(t *testing.T) {
	f := newFixture(map[string]int{"t": 4}, nil)
	a := f.join(t, "g", "t")
	f.sync(t, "g", a.MemberID)
	b := f.join(t, "g", "t")
	res := f.sync(t, "g", a.MemberID)
	require.Equal(t, tps("t-2 t-3"), res.Revoke)

	require.NoError(t, f.Release("g", a.MemberID, tps("t-0 t-1 t-3")), "still holds t-3")
	res = f.sync(t, "g", b.MemberID)
	require.Equal(t, tps("t-2"), res.Assign)
	require.Equal(t, tps("t-3"), res.Pending)

	require.NoError(t, f.Release("g", a.MemberID, append(tps("t-0 t-1"), TopicPartition{Topic: "u", Partition: 9})))
	res = f.sync(t, "g", b.MemberID)
	require.Equal(t, tps("t-3"), res.Assign)
	res = f.sync(t, "g", a.MemberID)
	require.Equal(t, SyncResult{Generation: 2, Owned: tps("t-0 t-1")}, res)

	require.NoError(t, f.Leave("g", a.MemberID))
	require.ErrorIs(t, f.Release("g", a.MemberID, nil), ErrFenced)
	require.ErrorIs(t, f.Release("g", "g-9", nil), ErrUnknownMember)
}
