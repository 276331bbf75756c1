package strata

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
)

// ConsumerOffsetsTopic is the internal, compacted topic that holds consumer
// groups' committed offsets, in Kafka's record format, as Kafka's does.
const ConsumerOffsetsTopic = "__consumer_offsets"

// TopicPartition names one partition of a topic.
type TopicPartition = group.TopicPartition

// GroupMember describes a consumer of a group in the process (a
// Consumer): its member id, subscription, generation, the partitions it
// owns and its share of the assignment, and when it last polled.
type GroupMember = group.MemberInfo

// OffsetAndMetadata is a committed offset (the next offset to read), its
// metadata string and when it was committed.
type OffsetAndMetadata = group.OffsetAndMetadata

// OffsetReset is Kafka's auto.offset.reset: where a consumer starts on a
// partition without a committed offset, or whose committed offset fell out
// of the partition's range (retention moved its start).
type OffsetReset = group.OffsetReset

// The offset reset policies.
const (
	ResetLatest   = group.ResetLatest   // the end: only records appended from now on (Kafka's default)
	ResetEarliest = group.ResetEarliest // the start offset: everything retained
	ResetNone     = group.ResetNone     // an error (ErrNoOffset)
)

// Errors of consumer groups. Match them with errors.Is.
var (
	// ErrFenced means a consumer was evicted (it stopped polling for longer
	// than the session timeout), left, or used a stale generation: its
	// commit is refused.
	ErrFenced = group.ErrFenced
	// ErrGroupActive means an operation that needs a group without members
	// (a commit or reset from outside a consumer) found members.
	ErrGroupActive = group.ErrGroupActive
	// ErrGroupClaimed means the group has members over Kafka's wire
	// protocol (package broker serves them, and holds a claim on the
	// group: ClaimGroup): it takes no Consumer, and its offsets are not
	// reset or deleted as a whole, until they are gone.
	ErrGroupClaimed = group.ErrGroupClaimed
	// ErrNoOffset means ResetNone found no usable committed offset.
	ErrNoOffset = group.ErrNoOffset
)

// offsetsTopicConfig is the configuration of the internal offsets topic.
var offsetsTopicConfig = TopicConfig{
	Partitions:    1,
	CleanupPolicy: CleanupCompact,
	SegmentBytes:  16 << 20, // commits are small; Kafka uses 100 MiB
}

// offsetLog appends commits to the internal topic, one batch per call:
// they are as durable as the store's flush policy makes appends. It is the
// coordinator's group.TxnOffsetLog.
type offsetLog struct{ s *Store }

func (l offsetLog) Append(commits []group.Commit) error {
	p, err := l.s.offsetsPartition()
	if err != nil {
		return err
	}
	_, err = p.Append(commitRecords(commits))
	return err
}

// initGroups starts the group coordinator and replays into it the committed
// offsets of the internal offsets topic, once there is one; then it deletes
// the offsets of topics and partitions that no longer exist (a DeleteTopic
// a crash interrupted before its tombstones).
//
// Damage in the offsets topic stops the replay, and the topic is then
// recovered as a crash would have it recovered, whatever the shutdown:
// every batch checked, the log cut at the first damaged one (the commits
// after it are lost, and the log says how many offsets went), and the
// replay runs again on what is left. The groups resume from their last
// commit before the damage.
func (s *Store) initGroups() error {
	s.groups = s.newCoordinator()
	t, ok := (*s.topics.Load())[ConsumerOffsetsTopic]
	if !ok {
		return nil
	}
	err := s.replayOffsets(t)
	if errors.Is(err, ErrCorrupt) {
		before := t.Partitions()[0].EndOffset()
		s.opts.Logger.Error("strata: "+ConsumerOffsetsTopic+" is damaged; recovering it and replaying it again", "err", err)
		if t, err = s.reopenRecovered(t); err != nil {
			return err
		}
		s.opts.Logger.Error("strata: recovered "+ConsumerOffsetsTopic+": commits after the damage are lost; groups resume from their last commit before it",
			"end_before", before, "end_after", t.Partitions()[0].EndOffset())
		s.groups = s.newCoordinator()
		err = s.replayOffsets(t)
	}
	if err != nil {
		return err
	}
	// Stale offsets are harmless (no read returns them: their topic is
	// gone, or their id is not its id): a failure to tombstone them, on a
	// full disk say, is logged, and the next Open tries again.
	n, err := s.groups.DeleteStaleOffsets()
	if n > 0 {
		s.opts.Logger.Warn("strata: deleted the committed offsets of topics that no longer exist", "offsets", n)
	}
	if err != nil {
		s.opts.Logger.Warn("strata: could not delete the committed offsets of topics that no longer exist; the next Open tries again", "err", err)
	}
	s.endStaleMembership()
	return nil
}

// newCoordinator returns a group coordinator over the store's topics, with
// no offsets.
func (s *Store) newCoordinator() *group.Coordinator {
	return group.NewCoordinator(offsetLog{s}, &group.Options{
		ClientID:       inProcessClientID,
		ClientHost:     inProcessClientHost,
		Now:            s.opts.Now,
		SessionTimeout: s.opts.SessionTimeout,
		Assignor:       s.opts.Assignor,
		Partitions: func(name string) int {
			t, ok := (*s.topics.Load())[name]
			if !ok || topic.IsInternal(name) {
				return 0
			}
			return t.NumPartitions()
		},
		TopicID: func(name string) [16]byte {
			if t, ok := (*s.topics.Load())[name]; ok {
				return t.ID()
			}
			return [16]byte{}
		},
	})
}

// reopenRecovered closes t and opens it again with every segment recovered
// (partition.Config.RecoverAll).
func (s *Store) reopenRecovered(t *topic.Topic) (*topic.Topic, error) {
	_ = t.Close()
	base := s.partitionBase()
	base.RecoverAll = true
	n, err := topic.Open(s.topicFS, s.dir, t.Name(), t.ID(), t.Config(), base, false)
	if err != nil {
		return nil, fmt.Errorf("strata: recovering %s: %w", t.Name(), err)
	}
	next := maps.Clone(*s.topics.Load())
	next[t.Name()] = n
	s.topics.Store(&next)
	return n, nil
}

// Commit commits offset — the next offset to read, last processed + 1 — for
// a group's partition, from outside any consumer (Kafka's standalone
// commit): the group must have no active consumers (ErrGroupActive). The
// offset must lie in the partition's [start, end] (ErrOffsetOutOfRange, with
// the range). The commit is a record in the internal __consumer_offsets
// topic, as durable as the store's flush policy makes appends, and replayed
// at Open. Consumers commit with Consumer.Commit.
func (s *Store) Commit(groupName, topicName string, part int, offset int64, metadata string) (err error) {
	if err := s.checkWritable("commit"); err != nil {
		return err
	}
	defer wrapErr(&err)
	id, err := s.checkCommit(topicName, part, offset)
	if err != nil {
		return err
	}
	tp := TopicPartition{Topic: topicName, Partition: part}
	return s.groups.Commit(groupName, group.MemberRef{}, map[TopicPartition]OffsetAndMetadata{
		tp: {Offset: offset, Metadata: metadata, CommitTime: s.opts.Now(), TopicID: id},
	})
}

// checkCommit refuses a commit outside the partition's [start, end], and
// returns the id of the topic it checked, for the commit to carry: a topic
// deleted (or created again) before the commit is stored must not take it.
func (s *Store) checkCommit(topicName string, part int, offset int64) (TopicID, error) {
	t, p, err := s.topicPartition(topicName, part)
	if err != nil {
		return TopicID{}, err
	}
	if start, end := p.StartOffset(), p.HighWatermark(); offset < start || offset > end {
		return TopicID{}, fmt.Errorf("strata: commit of offset %d for %s-%d out of range [%d, %d]: %w", offset, topicName, part, start, end, ErrOffsetOutOfRange)
	}
	return t.ID(), nil
}

// Committed returns a group's committed offset for a partition, and false
// if it has none.
func (s *Store) Committed(groupName, topicName string, part int) (OffsetAndMetadata, bool) {
	if s.closed.Load() {
		return OffsetAndMetadata{}, false
	}
	_ = s.followGroups() // the offsets before any damage
	return s.groups.Committed(groupName, topicName, part)
}

// PendingTxnOffset reports whether a transaction that has not ended holds
// an offset of the group for the partition (CommitTxnOffsets, or a Txn's
// offsets): Committed does not show it until the transaction commits. A
// reader of committed data that starts from the group's offset waits for
// it to end, or it reads again what the transaction consumed (Kafka's
// UNSTABLE_OFFSET_COMMIT for an OffsetFetch with require_stable, KIP-447).
// False on a closed store.
func (s *Store) PendingTxnOffset(groupName, topicName string, part int) bool {
	if s.closed.Load() {
		return false
	}
	tp := TopicPartition{Topic: topicName, Partition: part}
	return s.txns != nil && s.txns.held.has(groupName, tp) || s.groups.PendingTxn(groupName, topicName, part)
}

// GroupMembers returns the consumers of a group in the process, sorted by
// member id; nil for none. The Kafka clients of a group served over the
// wire are not among them (package broker's DescribeGroups lists those).
func (s *Store) GroupMembers(groupName string) []GroupMember {
	if s.closed.Load() {
		return nil
	}
	return s.groups.Members(groupName)
}

// Groups returns the consumer groups that have committed offsets, members
// or recorded membership (GroupMetadata), sorted by name.
func (s *Store) Groups() []string {
	_ = s.followGroups() // the groups before any damage
	return s.groups.Groups()
}

// PartitionLag is how far a group is behind on one partition.
type PartitionLag struct {
	Partition int
	EndOffset int64 // end of what readers see (see ListOffsets)
	// Committed is the group's committed offset, -1 if it has none.
	Committed int64
	// Lag is EndOffset − Committed (from the start offset when nothing is
	// committed, or the commit fell below it).
	Lag int64
	// OldestUnconsumed is the timestamp of the first record the group has
	// not consumed, zero when Lag is 0: now − OldestUnconsumed is how stale
	// the group is.
	OldestUnconsumed time.Time
}

// Lag reports, for each partition of a topic, how many records the group
// has not committed yet and how old the oldest of them is: the two signals
// to watch on a consumer group. An empty or overlong group id is
// ErrInvalidGroup.
//
// Under ReadCommitted, EndOffset is the last stable offset (what the
// group's read_committed consumers can reach) and OldestUnconsumed skips
// the records of aborted transactions.
func (s *Store) Lag(ctx context.Context, groupName, topicName string) ([]PartitionLag, error) {
	return s.lag(ctx, 0, groupName, topicName)
}

// lag is Lag at isolation level iso (zero for the store's).
func (s *Store) lag(ctx context.Context, iso Isolation, groupName, topicName string) (_ []PartitionLag, err error) {
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	t, err := s.topic(topicName)
	if err != nil {
		return nil, err
	}
	if err := group.ValidateGroupID(groupName); err != nil {
		return nil, err
	}
	if err := checkIsolation(iso); err != nil {
		return nil, err
	}
	iso = s.isolation(iso)
	if err := s.followGroups(); err != nil {
		return nil, err
	}
	out := make([]PartitionLag, 0, t.NumPartitions())
	for i, p := range t.Partitions() {
		committed := int64(-1)
		if om, ok := s.groups.Committed(groupName, topicName, i); ok {
			committed = om.Offset
		}
		pl, err := partitionLag(ctx, p, iso, i, committed)
		if err != nil {
			return nil, err
		}
		out = append(out, pl)
	}
	return out, nil
}

// partitionLag is the lag in partition i, p, of a group that committed
// offset committed there (-1 if it did not): from the committed offset, or
// the start of p if that is later, to the end a read at iso sees. It
// reads the oldest unconsumed record only when there is one, after
// checking ctx.
func partitionLag(ctx context.Context, p *partition.Partition, iso Isolation, i int, committed int64) (PartitionLag, error) {
	pl := PartitionLag{Partition: i, EndOffset: readEnd(p, iso), Committed: committed}
	from := max(p.StartOffset(), committed)
	pl.Lag = group.Lag(from, pl.EndOffset)
	if pl.Lag > 0 {
		if err := ctx.Err(); err != nil {
			return PartitionLag{}, err
		}
		pl.OldestUnconsumed = oldestFrom(p, iso, from, pl.EndOffset)
	}
	return pl, nil
}

// oldestFrom returns the timestamp of the first record of p at or after
// from and below end that a read at iso sees, zero if none.
func oldestFrom(p *partition.Partition, iso Isolation, from, end int64) time.Time {
	// Read in place.
	rd := p.NewReaderIsolation(from, iso.level())
	defer rd.Close()
	var r Record
	if ok, err := rd.Next(&r); err == nil && ok && r.Offset < end {
		return r.Timestamp
	}
	return time.Time{}
}

// DeleteGroupOffsets deletes a group's committed offsets — tombstones in
// __consumer_offsets — as Kafka's kafka-consumer-groups --delete does. The
// group must have no active consumers (ErrGroupActive) and no members
// over the wire (ErrGroupClaimed).
func (s *Store) DeleteGroupOffsets(groupName string) (err error) {
	if err := s.checkWritable("delete group offsets"); err != nil {
		return err
	}
	defer wrapErr(&err)
	if s.closed.Load() {
		return ErrClosed
	}
	return s.groups.DeleteOffsets(groupName)
}

// DeletePartitionOffsets deletes a group's committed offsets of parts, as
// Kafka's OffsetDelete does (kafka-consumer-groups --delete-offsets): no
// consumer of the group may subscribe to their topics (ErrGroupActive).
// Partitions without an offset are ignored.
func (s *Store) DeletePartitionOffsets(groupName string, parts []TopicPartition) (err error) {
	if err := s.checkWritable("delete offsets"); err != nil {
		return err
	}
	defer wrapErr(&err)
	if s.closed.Load() {
		return ErrClosed
	}
	if len(parts) == 0 {
		return group.ValidateGroupID(groupName)
	}
	return s.groups.DeleteOffsets(groupName, parts...)
}

// ClaimGroup claims a consumer group for members that the store does not
// manage: the Kafka clients that package broker serves, which run
// Kafka's classic group protocol with their own assignors. Until release
// is called, Store.Consumer for the group fails with ErrGroupClaimed, and
// so do ResetOffsets and DeleteGroupOffsets; Commit still commits, the
// claimer checking its members' commits itself. A group with consumers in
// the process cannot be claimed (ErrGroupActive). Calling release again
// does nothing.
func (s *Store) ClaimGroup(groupName string) (release func(), err error) {
	if err := s.checkWritable("claim group"); err != nil {
		return nil, err
	}
	defer wrapErr(&err)
	if s.closed.Load() {
		return nil, ErrClosed
	}
	return s.groups.Claim(groupName)
}
