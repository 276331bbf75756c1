package group

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// metaLog is a memLog that is a MetadataLog, keeping every metadata
// record appended.
type metaLog struct {
	memLog
	mu   sync.Mutex
	recs []metaRec
}

type metaRec struct {
	group string
	md    *GroupMetadata
}

func (l *metaLog) AppendMetadata(group string, md *GroupMetadata) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, metaRec{group, md})
}

func (l *metaLog) last(t *testing.T) metaRec {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	require.NotEmpty(t, l.recs)
	return l.recs[len(l.recs)-1]
}

func TestMetadataAtRebalance(t *testing.T) {
	clock := newClock()
	log := &metaLog{}
	c := NewCoordinator(log, &Options{Now: clock.Now, Partitions: newTopics(map[string]int{"t": 2}).Partitions,
		ClientID: "strata", ClientHost: "localhost"})

	a, err := c.Join("g", []string{"t"})
	require.NoError(t, err)
	rec := log.last(t)
	require.Equal(t, "g", rec.group)
	require.Equal(t, &GroupMetadata{ProtocolType: "consumer", Generation: 1, Protocol: "range", Leader: a.MemberID,
		StateTime: toMillis(clock.Now()),
		Members: []MemberMetadata{{MemberID: a.MemberID, ClientID: "strata", ClientHost: "localhost",
			RebalanceTimeout: DefaultRebalanceTimeout, SessionTimeout: DefaultSessionTimeout,
			Subscription: AppendSubscription(nil, []string{"t"}, nil),
			Assignment:   AppendAssignment(nil, tps("t-0 t-1"))}}}, rec.md)

	clock.Advance(time.Second)
	b, err := c.Join("g", []string{"t"})
	require.NoError(t, err)
	md, ok := c.Metadata("g")
	require.True(t, ok)
	require.Same(t, log.last(t).md, md)
	require.EqualValues(t, 2, md.Generation)
	require.Len(t, md.Members, 2)
	for i, want := range [][]TopicPartition{tps("t-0"), tps("t-1")} {
		got, _, err := DecodeAssignment(md.Members[i].Assignment)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}

	// The last member gone, the group is empty: no protocol, no members.
	require.NoError(t, c.Leave("g", a.MemberID))
	clock.Advance(DefaultSessionTimeout + time.Second)
	c.Expire() // b is evicted
	_, err = c.Sync("g", b.MemberID)
	require.ErrorIs(t, err, ErrFenced)
	require.Equal(t, &GroupMetadata{ProtocolType: "consumer", Generation: 4, StateTime: toMillis(clock.Now())}, log.last(t).md)
	require.Equal(t, []string{"g"}, c.Groups(), "a group with metadata only is listed")

	// Deleting the group deletes its metadata with a tombstone.
	require.NoError(t, c.DeleteOffsets("g"))
	require.Equal(t, metaRec{"g", nil}, log.last(t))
	_, ok = c.Metadata("g")
	require.False(t, ok)
	require.Empty(t, c.Groups())
}

// A replayed membership with members, which no member of the new
// Coordinator holds, is ended at the next generation; generations go on
// from the replayed one.
func TestEndStaleMembership(t *testing.T) {
	log := &metaLog{}
	c := NewCoordinator(log, nil)
	c.ReplayMetadata("g", goldenMeta)
	c.ReplayMetadata("empty", &GroupMetadata{ProtocolType: "consumer", Generation: 3})
	c.ReplayMetadata("gone", goldenMeta)
	c.ReplayMetadata("gone", nil)
	c.ReplayMetadata("", goldenMeta) // an invalid id: skipped
	require.Equal(t, []string{"empty", "g"}, c.Groups())

	require.Equal(t, 1, c.EndStaleMembership())
	rec := log.last(t)
	require.Equal(t, "g", rec.group)
	require.EqualValues(t, 2, rec.md.Generation)
	require.Empty(t, rec.md.Members)
	require.Len(t, log.recs, 1)

	ref, err := c.Join("g", []string{"t"})
	require.NoError(t, err)
	require.Equal(t, 3, ref.Generation)
}

// PublishMetadata records the membership of a claimed group; a group with
// members of the Coordinator refuses it.
func TestPublishMetadata(t *testing.T) {
	log := &metaLog{}
	c := NewCoordinator(log, nil)
	release, err := c.Claim("wire")
	require.NoError(t, err)
	require.NoError(t, c.PublishMetadata("wire", goldenMeta))
	require.Equal(t, metaRec{"wire", goldenMeta}, log.last(t))
	release()
	md, ok := c.Metadata("wire")
	require.True(t, ok, "the release keeps a group with metadata")
	require.Same(t, goldenMeta, md)

	_, err = c.Join("local", nil)
	require.NoError(t, err)
	n := len(log.recs)
	require.ErrorIs(t, c.PublishMetadata("local", goldenMeta), ErrGroupActive)
	require.ErrorIs(t, c.PublishMetadata("", goldenMeta), ErrInvalidGroup)
	require.ErrorIs(t, c.PublishMetadata("x", nil), ErrBadRecord)
	require.Len(t, log.recs, n)
}
