package strata_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// metaRecord is a group metadata record of __consumer_offsets, in log
// order.
type metaRecord struct {
	offset int64
	group  string
	md     *strata.GroupMetadata
}

// metadataRecords reads every group metadata record __consumer_offsets
// holds.
func metadataRecords(t *testing.T, s *strata.Store) []metaRecord {
	t.Helper()
	p, err := strata.PartitionOf(s, strata.ConsumerOffsetsTopic, 0)
	require.NoError(t, err)
	var out []metaRecord
	var buf []byte
	for off := p.StartOffset(); off < p.HighWatermark(); {
		buf, err = p.ReadBatches(buf, off, 1<<20)
		require.NoError(t, err)
		require.NotEmpty(t, buf)
		it := log.NewBatchIter(buf)
		for it.Next() {
			h := it.Header()
			off = h.NextOffset()
			recs, err := log.NewRecordIterHeader(it.Batch(), h)
			require.NoError(t, err)
			var r log.Record
			for recs.Next(&r) {
				name, md, err := group.DecodeGroupMetadata(r.Key, r.Value)
				if err == nil {
					out = append(out, metaRecord{r.Offset, name, md})
				}
			}
			require.NoError(t, recs.Err())
		}
		require.NoError(t, it.Err())
	}
	return out
}

// TestGroupMetadataPersisted: a consumer group's membership is written to
// __consumer_offsets in Kafka's format at each rebalance, DescribeGroup
// reads it with the committed offsets and the lag, a store reopened after
// its consumers vanished (a crash) records that the group is empty,
// compaction keeps the latest record, and deleting the group leaves a
// tombstone.
func TestGroupMetadataPersisted(t *testing.T) {
	ctx := context.Background()
	defer strata.SetOffsetsSegmentBytes(4096)()
	fs := vfs.NewMem()
	now := time.UnixMilli(1_700_000_000_000)
	clock := func() time.Time { return now }
	opts := &strata.Options{FS: fs, Now: clock, Sync: strata.SyncAlways, RetentionCheckInterval: -1, CleanerInterval: -1,
		Logger: slog.New(slog.DiscardHandler)}
	s, err := strata.Open("/d", opts)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	for i := range 10 {
		_, err := s.AppendTo(ctx, "t", i%2, strata.Record{Value: []byte("v"), Timestamp: now.Add(time.Duration(i) * time.Second)})
		require.NoError(t, err)
	}
	_, err = s.DescribeGroup(ctx, "g")
	require.ErrorIs(t, err, strata.ErrUnknownGroup)
	_, err = s.DescribeGroup(ctx, "")
	require.ErrorIs(t, err, strata.ErrInvalidGroup)

	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, MaxPollRecords: 3})
	require.NoError(t, err)
	recs, err := c.Poll(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	require.NoError(t, c.Commit(ctx))

	d, err := s.DescribeGroup(ctx, "g")
	require.NoError(t, err)
	require.Equal(t, strata.GroupStable, d.State)
	require.Equal(t, "consumer", d.ProtocolType)
	require.Equal(t, "range", d.Protocol)
	require.Equal(t, 1, d.Generation)
	require.Len(t, d.Members, 1)
	m := d.Members[0]
	require.Equal(t, strata.GroupMemberDescription{MemberID: m.MemberID, ClientID: "strata", ClientHost: "localhost",
		Topics: []string{"t"}, Assigned: []strata.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}}, m)
	require.Len(t, d.Partitions, 2)
	var lag int64
	for _, gp := range d.Partitions {
		require.Equal(t, m.MemberID, gp.MemberID)
		require.Equal(t, int64(5), gp.EndOffset)
		lag += gp.Lag
		if gp.Committed >= 0 && gp.Lag > 0 {
			// The oldest unconsumed record is the one at the committed offset.
			want := now.Add(time.Duration(2*gp.Committed+int64(gp.Partition)) * time.Second)
			require.Equal(t, want.UnixMilli(), gp.OldestUnconsumed.UnixMilli(), "%+v", gp)
		}
	}
	require.Equal(t, int64(10-len(recs)), lag)
	l, err := s.ListGroups()
	require.NoError(t, err)
	require.Equal(t, []strata.GroupListing{{Group: "g", State: "Stable", ProtocolType: "consumer", Protocol: "range", Members: 1}}, l)

	// The record is Kafka's: the member's assignment in the consumer
	// protocol.
	mr := metadataRecords(t, s)
	require.Len(t, mr, 1)
	require.Equal(t, "g", mr[0].group)
	require.Equal(t, now.UnixMilli(), mr[0].md.StateTime.UnixMilli())
	parts, _, err := group.DecodeAssignment(mr[0].md.Members[0].Assignment)
	require.NoError(t, err)
	require.Equal(t, m.Assigned, parts)

	// A crash: the consumer never leaves. The reopened store replays the
	// membership and, its members being gone, records the group empty at
	// the next generation; the commits stay.
	committed := map[int]int64{}
	for _, gp := range d.Partitions {
		committed[gp.Partition] = gp.Committed
	}
	opts.FS = fs.Crash()
	s, err = strata.Open("/d", opts)
	require.NoError(t, err)
	defer s.Close()
	mr = metadataRecords(t, s)
	require.Len(t, mr, 2)
	require.Len(t, mr[0].md.Members, 1, "the membership before the crash")
	require.Empty(t, mr[1].md.Members)
	require.EqualValues(t, 2, mr[1].md.Generation)
	d, err = s.DescribeGroup(ctx, "g")
	require.NoError(t, err)
	require.Equal(t, strata.GroupEmpty, d.State)
	require.Equal(t, 2, d.Generation)
	require.Empty(t, d.Members)
	for _, gp := range d.Partitions {
		require.Equal(t, committed[gp.Partition], gp.Committed)
	}

	// A new consumer's generation goes on from the recorded one.
	c, err = s.Consumer("g", []string{"t"}, strata.ConsumerOptions{})
	require.NoError(t, err)
	_, err = c.Poll(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	d, err = s.DescribeGroup(ctx, "g")
	require.NoError(t, err)
	require.Equal(t, 4, d.Generation, "joined at 3, left at 4")
	require.Equal(t, strata.GroupEmpty, d.State)

	// Compaction keeps the group's latest record (the cleaner leaves the
	// active segment alone: the test's segments are small).
	for range 40 {
		c, err = s.Consumer("g", []string{"t"}, strata.ConsumerOptions{})
		require.NoError(t, err)
		require.NoError(t, c.Close())
	}
	before := metadataRecords(t, s)
	_, err = s.Compact(ctx, strata.ConsumerOffsetsTopic)
	require.NoError(t, err)
	mr = metadataRecords(t, s)
	require.Less(t, len(mr), len(before)/2)
	require.Equal(t, before[len(before)-1], mr[len(mr)-1])
	require.EqualValues(t, 84, mr[len(mr)-1].md.Generation)

	// Deleting the group writes a tombstone; the group is unknown, after a
	// reopen too.
	require.NoError(t, s.DeleteGroupOffsets("g"))
	mr = metadataRecords(t, s)
	require.Nil(t, mr[len(mr)-1].md)
	_, err = s.DescribeGroup(ctx, "g")
	require.ErrorIs(t, err, strata.ErrUnknownGroup)
	require.NoError(t, s.Close())
	s, err = strata.Open("/d", opts)
	require.NoError(t, err)
	_, err = s.DescribeGroup(ctx, "g")
	require.ErrorIs(t, err, strata.ErrUnknownGroup)
	require.Empty(t, s.Groups())
}

// TestPublishGroup: the membership of a group whose members the store
// does not manage (package broker's classic groups) is recorded as given
// and described; a group with the store's own consumers refuses it.
func TestPublishGroup(t *testing.T) {
	ctx := context.Background()
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 3}))
	release, err := s.ClaimGroup("wire")
	require.NoError(t, err)
	md := &strata.GroupMetadata{ProtocolType: "consumer", Generation: 5, Protocol: "cooperative-sticky", Leader: "rdkafka-1",
		Members: []strata.GroupMemberMetadata{{MemberID: "rdkafka-1", ClientID: "rdkafka", ClientHost: "/127.0.0.1",
			SessionTimeout: 45 * time.Second,
			Subscription:   group.AppendSubscription(nil, []string{"t"}, nil),
			Assignment:     group.AppendAssignment(nil, []strata.TopicPartition{{Topic: "t", Partition: 2}, {Topic: "t", Partition: 0}})}}}
	require.NoError(t, s.PublishGroup("wire", md))
	d, err := s.DescribeGroup(ctx, "wire")
	require.NoError(t, err)
	require.Equal(t, strata.GroupStable, d.State)
	require.Equal(t, []strata.GroupMemberDescription{{MemberID: "rdkafka-1", ClientID: "rdkafka", ClientHost: "/127.0.0.1",
		Topics: []string{"t"}, Assigned: []strata.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 2}}}}, d.Members)
	require.Len(t, d.Partitions, 2, "the assigned partitions, without commits")
	require.Equal(t, int64(-1), d.Partitions[0].Committed)
	release()

	c, err := s.Consumer("local", []string{"t"}, strata.ConsumerOptions{})
	require.NoError(t, err)
	defer c.Close()
	require.ErrorIs(t, s.PublishGroup("local", md), strata.ErrGroupActive)
	require.ErrorIs(t, s.PublishGroup("", md), strata.ErrInvalidGroup)
	require.ErrorIs(t, s.PublishGroup("x", nil), strata.ErrInvalidConfig)
}

// TestGroupMembershipEndsAtClose: a store closed while its consumers are
// members records the group without them before its topics close, so a
// Consumer's Close after it logs nothing and writes nothing, and the
// next Open finds no membership to end.
func TestGroupMembershipEndsAtClose(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewMem()
	var logs strings.Builder
	opts := &strata.Options{FS: fs, RetentionCheckInterval: -1, CleanerInterval: -1,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	s, err := strata.Open("/d", opts)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	var revoked, lost []strata.TopicPartition
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{
		OnRevoked: func(_ context.Context, _ *strata.Consumer, parts []strata.TopicPartition) {
			revoked = append(revoked, parts...)
		},
		OnLost: func(_ context.Context, _ *strata.Consumer, parts []strata.TopicPartition) {
			lost = append(lost, parts...)
		},
	})
	require.NoError(t, err)
	pctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = c.Poll(pctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, s.Close())
	require.Empty(t, logs.String())
	require.NoError(t, c.Close())
	require.Empty(t, logs.String())
	require.Empty(t, revoked, "nothing can be committed: the partitions are lost")
	require.Len(t, lost, 2)

	s, err = strata.Open("/d", opts)
	require.NoError(t, err)
	defer s.Close()
	mr := metadataRecords(t, s)
	require.Empty(t, logs.String(), "no membership left to end")
	require.Len(t, mr, 2)
	require.Len(t, mr[0].md.Members, 1)
	require.Empty(t, mr[1].md.Members)
	require.EqualValues(t, 2, mr[1].md.Generation)
	d, err := s.DescribeGroup(ctx, "g")
	require.NoError(t, err)
	require.Equal(t, strata.GroupEmpty, d.State)
}

// TestGroupMembershipEndsAtCloseRace: consumers that poll while the store
// closes end their membership with it: nothing is logged, and every group
// is recorded empty, none rejoined after Close fenced it.
func TestGroupMembershipEndsAtCloseRace(t *testing.T) {
	ctx := context.Background()
	for range 20 {
		fs := vfs.NewMem()
		var logs syncBuffer
		opts := &strata.Options{FS: fs, RetentionCheckInterval: -1, CleanerInterval: -1,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}
		s, err := strata.Open("/d", opts)
		require.NoError(t, err)
		require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
		var ready, done sync.WaitGroup
		groups := []string{"a", "b", "c", "d"}
		for _, g := range groups {
			c, err := s.Consumer(g, []string{"t"}, strata.ConsumerOptions{PollWait: time.Millisecond})
			require.NoError(t, err)
			ready.Add(1)
			done.Go(func() {
				first := true
				for {
					pctx, cancel := context.WithTimeout(ctx, 2*time.Millisecond)
					_, err := c.Poll(pctx)
					cancel()
					if first {
						first = false
						ready.Done()
					}
					if errors.Is(err, strata.ErrClosed) {
						break
					}
				}
				require.NoError(t, c.Close())
			})
		}
		ready.Wait()
		require.NoError(t, s.Close())
		done.Wait()
		require.Empty(t, logs.String())

		s, err = strata.Open("/d", opts)
		require.NoError(t, err)
		require.Empty(t, logs.String(), "no membership left to end")
		for _, g := range groups {
			d, err := s.DescribeGroup(ctx, g)
			require.NoError(t, err)
			require.Equal(t, strata.GroupEmpty, d.State, g)
		}
		require.NoError(t, s.Close())
	}
}
