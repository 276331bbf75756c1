package group

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// om is an OffsetAndMetadata with offset o and no metadata.
func om(o int64) OffsetAndMetadata { return OffsetAndMetadata{Offset: o} }

// at is an OffsetAndMetadata with offset o committed at epoch.
func at(o int64) OffsetAndMetadata { return OffsetAndMetadata{Offset: o, CommitTime: epoch} }

// tp is the TopicPartition topic-p.
func tp(topic string, p int) TopicPartition { return TopicPartition{Topic: topic, Partition: p} }

func TestCommitAndCommitted(t *testing.T) {
	f := newFixture(map[string]int{"t": 4}, nil)
	_, ok := f.Committed("g", "t", 0)
	require.False(t, ok, "nothing committed yet")

	require.NoError(t, f.Commit("g", MemberRef{}, map[TopicPartition]OffsetAndMetadata{
		tp("t", 0): {Offset: 10, Metadata: "first"},
		tp("t", 1): om(20),
	}))
	got, ok := f.Committed("g", "t", 0)
	require.True(t, ok)
	require.Equal(t, OffsetAndMetadata{Offset: 10, Metadata: "first", CommitTime: epoch}, got)
	require.Equal(t, map[TopicPartition]OffsetAndMetadata{tp("t", 0): {Offset: 10, Metadata: "first", CommitTime: epoch}, tp("t", 1): at(20)},
		f.Offsets("g"))

	// A later commit replaces one partition's offset and keeps the others.
	f.clock.Advance(1500 * time.Microsecond)
	require.NoError(t, f.Commit("g", MemberRef{}, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(11)}))
	got, _ = f.Committed("g", "t", 0)
	require.Equal(t, OffsetAndMetadata{Offset: 11, CommitTime: epoch.Add(time.Millisecond)}, got, "commit time in whole ms")
	got, _ = f.Committed("g", "t", 1)
	require.Equal(t, int64(20), got.Offset)

	// The log got both batches, in partition order.
	require.Equal(t, []Commit{
		{Group: "g", Topic: "t", Partition: 0, Offset: 10, Metadata: "first", CommitTime: epoch},
		{Group: "g", Topic: "t", Partition: 1, Offset: 20, CommitTime: epoch},
		{Group: "g", Topic: "t", Partition: 0, Offset: 11, CommitTime: epoch.Add(time.Millisecond)},
	}, f.log.commits())

	// A caller's CommitTime is kept, truncated to milliseconds, in UTC.
	when := time.Date(2020, 1, 2, 3, 4, 5, 6_789_000, time.FixedZone("X", 3600))
	require.NoError(t, f.Commit("g", MemberRef{}, map[TopicPartition]OffsetAndMetadata{tp("t", 2): {Offset: 1, CommitTime: when}}))
	got, _ = f.Committed("g", "t", 2)
	require.Equal(t, time.UnixMilli(when.UnixMilli()).UTC(), got.CommitTime)

	// Offsets returns a copy.
	f.Offsets("g")[tp("t", 0)] = om(999)
	got, _ = f.Committed("g", "t", 0)
	require.Equal(t, int64(11), got.Offset)

	// Committing nothing writes nothing.
	n := len(f.log.commits())
	require.NoError(t, f.Commit("g", MemberRef{}, nil))
	require.Len(t, f.log.commits(), n)
}

func TestCommitGroupsAreIsolated(t *testing.T) {
	f := newFixture(map[string]int{"t": 2}, nil)
	require.NoError(t, f.Commit("a", MemberRef{}, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(1)}))
	require.NoError(t, f.Commit("b", MemberRef{}, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(2), tp("t", 1): om(3)}))
	a, _ := f.Committed("a", "t", 0)
	b, _ := f.Committed("b", "t", 0)
	require.Equal(t, int64(1), a.Offset)
	require.Equal(t, int64(2), b.Offset)
	_, ok := f.Committed("a", "t", 1)
	require.False(t, ok)
	require.Len(t, f.Offsets("a"), 1)
	require.Len(t, f.Offsets("b"), 2)
	require.Empty(t, f.Offsets("c"))
	require.Equal(t, []string{"a", "b"}, f.Groups())

	// A member of b cannot touch a's offsets, and an active b does not
	// stop simple commits to a.
	ref := f.join(t, "b", "t")
	f.settle(t, "b")
	require.NoError(t, f.Commit("a", MemberRef{}, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(5)}))
	require.ErrorIs(t, f.Commit("a", ref, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(6)}), ErrUnknownMember)
}

func TestCommitRejects(t *testing.T) {
	long := strings.Repeat("m", DefaultMetadataMaxBytes+1)
	tests := []struct {
		name    string
		group   string
		ref     func(f *fixture, member MemberRef) MemberRef
		offsets map[TopicPartition]OffsetAndMetadata
		want    error
	}{
		{"metadata over the limit", "g", simpleRef, map[TopicPartition]OffsetAndMetadata{tp("t", 0): {Offset: 1, Metadata: long}}, ErrMetadataTooLarge},
		{"negative offset", "g", simpleRef, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(-1)}, ErrInvalidOffset},
		{"unknown topic", "g", simpleRef, map[TopicPartition]OffsetAndMetadata{tp("nope", 0): om(1)}, ErrUnknownPartition},
		{"partition out of range", "g", simpleRef, map[TopicPartition]OffsetAndMetadata{tp("t", 2): om(1)}, ErrUnknownPartition},
		{"negative partition", "g", simpleRef, map[TopicPartition]OffsetAndMetadata{tp("t", -1): om(1)}, ErrUnknownPartition},
		{"empty group id", "", simpleRef, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(1)}, ErrInvalidGroup},
		{"group id too long", strings.Repeat("g", maxStringLen+1), simpleRef, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(1)}, ErrInvalidGroup},
		{"simple commit to an active group", "active", simpleRef, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(1)}, ErrGroupActive},
		{"generation without member id", "active", func(*fixture, MemberRef) MemberRef { return MemberRef{Generation: 1} },
			map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(1)}, ErrUnknownMember},
		{"member id never issued", "active", func(_ *fixture, m MemberRef) MemberRef {
			return MemberRef{MemberID: "active-99", Generation: m.Generation}
		},
			map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(1)}, ErrUnknownMember},
		{"member of another group", "other", func(_ *fixture, m MemberRef) MemberRef { return m },
			map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(1)}, ErrUnknownMember},
		{"stale generation", "active", func(_ *fixture, m MemberRef) MemberRef { m.Generation--; return m },
			map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(1)}, ErrFenced},
		{"future generation", "active", func(_ *fixture, m MemberRef) MemberRef { m.Generation++; return m },
			map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(1)}, ErrFenced},
		{"not owned", "active", func(_ *fixture, m MemberRef) MemberRef { return m },
			map[TopicPartition]OffsetAndMetadata{tp("u", 0): om(1)}, ErrNotOwner},
		{"owned and not owned", "active", func(_ *fixture, m MemberRef) MemberRef { return m },
			map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(1), tp("u", 0): om(1)}, ErrNotOwner},
		{"left member", "active", func(f *fixture, m MemberRef) MemberRef {
			require.NoError(t, f.Leave("active", m.MemberID))
			return m
		}, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(1)}, ErrFenced},
		{"evicted member", "active", func(f *fixture, m MemberRef) MemberRef {
			f.clock.Advance(DefaultSessionTimeout + time.Nanosecond)
			return m
		}, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(1)}, ErrFenced},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(map[string]int{"t": 2, "u": 1}, nil)
			// Member "active-1" owns t-0 and t-1 (it subscribes to t only).
			member := f.join(t, "active", "t")
			res := f.settle(t, "active")[member.MemberID]
			require.Equal(t, tps("t-0 t-1"), res.Owned)
			member.Generation = res.Generation
			ref := tt.ref(f, member)

			before := f.log.commits()
			err := f.Commit(tt.group, ref, tt.offsets)
			require.ErrorIs(t, err, tt.want)
			require.Equal(t, before, f.log.commits(), "nothing appended")
			if tt.group != "" && len(tt.group) <= maxStringLen {
				require.Empty(t, f.Offsets(tt.group), "nothing visible")
			}
		})
	}
}

// simpleRef returns the zero MemberRef.
func simpleRef(*fixture, MemberRef) MemberRef { return MemberRef{} }

func TestCommitMetadataLimit(t *testing.T) {
	f := newFixture(map[string]int{"t": 1}, nil)
	exact := strings.Repeat("m", DefaultMetadataMaxBytes)
	require.NoError(t, f.Commit("g", MemberRef{}, map[TopicPartition]OffsetAndMetadata{tp("t", 0): {Offset: 1, Metadata: exact}}))

	small := NewCoordinator(nil, &Options{MetadataMaxBytes: 3})
	require.NoError(t, small.Commit("g", MemberRef{}, map[TopicPartition]OffsetAndMetadata{tp("t", 0): {Offset: 1, Metadata: "abc"}}))
	require.ErrorIs(t, small.Commit("g", MemberRef{}, map[TopicPartition]OffsetAndMetadata{tp("t", 0): {Offset: 1, Metadata: "abcd"}}),
		ErrMetadataTooLarge)

	// The limit never exceeds what the format holds.
	huge := NewCoordinator(nil, &Options{MetadataMaxBytes: 1 << 20})
	require.ErrorIs(t, huge.Commit("g", MemberRef{}, map[TopicPartition]OffsetAndMetadata{tp("t", 0): {Metadata: strings.Repeat("m", maxStringLen+1)}}),
		ErrMetadataTooLarge)
}

func TestCommitLogFailure(t *testing.T) {
	f := newFixture(map[string]int{"t": 2}, nil)
	require.NoError(t, f.Commit("g", MemberRef{}, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(1)}))
	f.log.fail = errDisk
	err := f.Commit("g", MemberRef{}, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(2), tp("t", 1): om(2)})
	require.ErrorIs(t, err, errDisk)
	got, _ := f.Committed("g", "t", 0)
	require.Equal(t, int64(1), got.Offset, "the failed commit is not visible")
	_, ok := f.Committed("g", "t", 1)
	require.False(t, ok)

	require.ErrorIs(t, f.DeleteOffsets("g"), errDisk)
	require.Len(t, f.Offsets("g"), 1, "the failed delete deleted nothing")

	f.log.fail = nil
	require.NoError(t, f.Commit("g", MemberRef{}, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(2)}))
	got, _ = f.Committed("g", "t", 0)
	require.Equal(t, int64(2), got.Offset)
}

func TestNilLogKeepsCommitsInMemory(t *testing.T) {
	c := NewCoordinator(nil, nil)
	require.NoError(t, c.Commit("g", MemberRef{}, map[TopicPartition]OffsetAndMetadata{tp("any", 7): om(3)}))
	got, ok := c.Committed("g", "any", 7)
	require.True(t, ok)
	require.Equal(t, int64(3), got.Offset)
}

// TestReplay rebuilds a Coordinator from another's log, through the record
// format, and compares their offsets.
func TestReplay(t *testing.T) {
	f := newFixture(map[string]int{"t": 3, "u": 1}, nil)
	commit := func(group string, offsets map[TopicPartition]OffsetAndMetadata) {
		require.NoError(t, f.Commit(group, MemberRef{}, offsets))
		f.clock.Advance(time.Second)
	}
	commit("a", map[TopicPartition]OffsetAndMetadata{tp("t", 0): {Offset: 1, Metadata: "x"}, tp("t", 1): om(2), tp("u", 0): om(3)})
	commit("b", map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(10)})
	commit("a", map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(4)})
	require.NoError(t, f.DeleteOffsets("a", tp("t", 1), tp("t", 2)))
	commit("c", map[TopicPartition]OffsetAndMetadata{tp("t", 2): om(7)})
	require.NoError(t, f.DeleteOffsets("c"))
	commit("a", map[TopicPartition]OffsetAndMetadata{tp("t", 1): om(5)})

	// Through the bytes, as the store will do it.
	var replayed []Commit
	for _, c := range f.log.commits() {
		key, value := EncodeCommit(c)
		got, err := DecodeCommit(key, value)
		require.NoError(t, err)
		replayed = append(replayed, got)
	}
	r := NewCoordinator(nil, nil)
	r.Replay(replayed...)
	for _, group := range []string{"a", "b", "c"} {
		require.Equal(t, f.Offsets(group), r.Offsets(group), "group %s", group)
	}
	require.Equal(t, []string{"a", "b"}, r.Groups())

	// Replay one at a time, and with commits of invalid groups, gives the
	// same.
	one := NewCoordinator(nil, nil)
	for _, c := range replayed {
		one.Replay(c, Commit{Topic: "t", Offset: 1})
	}
	require.Equal(t, r.Groups(), one.Groups())
	require.Equal(t, r.Offsets("a"), one.Offsets("a"))
}

func TestDeleteOffsets(t *testing.T) {
	f := newFixture(map[string]int{"t": 2, "u": 1}, nil)
	all := map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(1), tp("t", 1): om(2), tp("u", 0): om(3)}
	require.NoError(t, f.Commit("g", MemberRef{}, all))
	require.NoError(t, f.DeleteOffsets("nobody"), "an unknown group has nothing to delete")
	require.ErrorIs(t, f.DeleteOffsets(""), ErrInvalidGroup)

	// With a member subscribed to t: all offsets, and t's, stay; u's may go.
	ref := f.join(t, "g", "t")
	require.ErrorIs(t, f.DeleteOffsets("g"), ErrGroupActive)
	require.ErrorIs(t, f.DeleteOffsets("g", tp("u", 0), tp("t", 1)), ErrGroupActive)
	require.Len(t, f.Offsets("g"), 3)
	n := len(f.log.commits())
	require.NoError(t, f.DeleteOffsets("g", tp("u", 0), tp("u", 0), tp("u", 9)))
	require.Equal(t, []Commit{{Group: "g", Topic: "u", Partition: 0, Deleted: true}}, f.log.commits()[n:])
	require.Len(t, f.Offsets("g"), 2)

	// Once the member left, everything may go, as tombstones in order.
	require.NoError(t, f.Leave("g", ref.MemberID))
	n = len(f.log.commits())
	require.NoError(t, f.DeleteOffsets("g"))
	require.Equal(t, []Commit{
		{Group: "g", Topic: "t", Partition: 0, Deleted: true},
		{Group: "g", Topic: "t", Partition: 1, Deleted: true},
	}, f.log.commits()[n:])
	require.Empty(t, f.Offsets("g"))
	require.Empty(t, f.Groups())
	require.NoError(t, f.DeleteOffsets("g"))
	require.Len(t, f.log.commits(), n+2, "nothing left to delete, nothing appended")
}

func TestOffsetResetPosition(t *testing.T) {
	p := tp("t", 0)
	tests := []struct {
		name       string
		reset      OffsetReset
		committed  int64
		ok         bool
		start, end int64
		want       int64
		err        error
	}{
		{"committed in range", ResetNone, 15, true, 10, 20, 15, nil},
		{"committed at start", ResetNone, 10, true, 10, 20, 10, nil},
		{"committed at end", ResetNone, 20, true, 10, 20, 20, nil},
		{"none latest", ResetLatest, 0, false, 10, 20, 20, nil},
		{"none earliest", ResetEarliest, 0, false, 10, 20, 10, nil},
		{"none none", ResetNone, 0, false, 10, 20, 0, ErrNoOffset},
		{"below start latest", ResetLatest, 5, true, 10, 20, 20, nil},
		{"below start earliest", ResetEarliest, 5, true, 10, 20, 10, nil},
		{"below start none", ResetNone, 5, true, 10, 20, 0, ErrNoOffset},
		{"past end earliest", ResetEarliest, 21, true, 10, 20, 10, nil},
		{"unknown policy", OffsetReset(9), 0, false, 10, 20, 0, ErrNoOffset},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.reset.Position(p, tt.committed, tt.ok, tt.start, tt.end)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
	require.Equal(t, "latest", ResetLatest.String())
	require.Equal(t, "earliest", ResetEarliest.String())
	require.Equal(t, "none", ResetNone.String())
	require.Equal(t, "OffsetReset(9)", OffsetReset(9).String())
	require.Equal(t, int64(5), Lag(15, 20))
	require.Equal(t, int64(0), Lag(25, 20))
}
