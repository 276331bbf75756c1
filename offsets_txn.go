package strata

import (
	"errors"
	"fmt"

	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
)

// offsetsPartition returns the partition of the internal offsets topic,
// creating the topic at the store's first commit, so that a store without
// groups (a test's, say) opens without it.
func (s *Store) offsetsPartition() (*partition.Partition, error) {
	if err := s.checkWritable("commit"); err != nil {
		return nil, err
	}
	t, err := s.internalTopic(ConsumerOffsetsTopic)
	if errors.Is(err, ErrUnknownTopic) {
		err = s.createTopic(ConsumerOffsetsTopic, offsetsTopicConfig)
		if err == nil {
			t, err = s.internalTopic(ConsumerOffsetsTopic)
		} else if errors.Is(err, ErrTopicExists) {
			// Created meanwhile, or refused (directories of it with no
			// topics.json to list them): then the refusal says why.
			if t2, err2 := s.internalTopic(ConsumerOffsetsTopic); err2 == nil {
				t, err = t2, nil
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return t.Partition(0)
}

// commitTxnOffsets commits offsets for a group inside the transaction of
// producer pid at epoch: each offset is checked as Commit checks it (in
// the partition's [start, end], stamped with its topic's id), and the
// group coordinator holds them pending until endTxnOffsets. An offset
// that carries a topic id already (Txn.CommitOffsets stamps it when it
// takes the offset) whose topic was deleted since, and perhaps created
// again, is ErrUnknownTopic: it is never the committed offset of a new
// topic of the name. A member ref fences a zombie consumer (KIP-447); the
// zero ref commits for the group whatever its members.
func (s *Store) commitTxnOffsets(groupName string, ref group.MemberRef, pid int64, epoch int16, offsets map[TopicPartition]OffsetAndMetadata) error {
	if s.closed.Load() {
		return ErrClosed
	}
	checked := make(map[TopicPartition]OffsetAndMetadata, len(offsets))
	for tp, om := range offsets {
		if om.TopicID != (TopicID{}) {
			if t, err := s.topic(tp.Topic); err == nil && t.ID() != om.TopicID {
				return fmt.Errorf("strata: offset %d of %s was taken for a topic of the name deleted since: %w", om.Offset, tp, ErrUnknownTopic)
			}
		}
		id, err := s.checkCommit(tp.Topic, tp.Partition, om.Offset)
		if err != nil {
			return err
		}
		om.TopicID = id
		if om.CommitTime.IsZero() {
			om.CommitTime = s.opts.Now()
		}
		checked[tp] = om
	}
	return s.groups.CommitTxn(groupName, ref, pid, epoch, checked)
}

// endTxnOffsets ends producer pid's transaction in the groups' offsets:
// its COMMIT or ABORT marker is appended to __consumer_offsets, then the
// offsets it committed become the groups' committed offsets, or are
// dropped. It returns the marker's offset. A transaction that committed
// offsets calls it with its other markers; after a restart, once Open has
// replayed the offsets (initGroups).
func (s *Store) endTxnOffsets(pid int64, epoch int16, commit bool) (int64, error) {
	return s.groups.EndTxn(pid, epoch, commit)
}

// commitRecords returns the __consumer_offsets records of commits.
func commitRecords(commits []group.Commit) []Record {
	recs := make([]Record, len(commits))
	for i, c := range commits {
		recs[i].Key, recs[i].Value = group.EncodeCommit(c)
	}
	return recs
}

// AppendTxn appends commits to the offsets topic as one transactional
// batch of producer pid at epoch, with the producer's next sequence in the
// partition, as Kafka's group coordinator writes a TxnOffsetCommit.
func (l offsetLog) AppendTxn(pid int64, epoch int16, commits []group.Commit) error {
	p, err := l.s.offsetsPartition()
	if err != nil {
		return err
	}
	_, err = appendTxnBatch(p, commitRecords(commits), pid, epoch, nextTxnSequence(p, pid, epoch))
	return err
}

// nextTxnSequence returns the sequence producer pid's next batch at epoch
// in p starts at: the one after its last batch's, as the partition's
// producer state holds it, and 0 at an epoch whose batches the partition
// does not hold (a new epoch starts at 0). The group coordinator
// serializes the appends of one producer.
func nextTxnSequence(p *partition.Partition, pid int64, epoch int16) int32 {
	if info, ok := p.Producer(pid); ok && info.Epoch == epoch && info.LastSequence >= 0 {
		return log.IncrementSequence(info.LastSequence, 1)
	}
	return 0
}

// AppendMarker appends producer pid's COMMIT or ABORT marker, at epoch, to
// the offsets topic, and returns its offset.
func (l offsetLog) AppendMarker(pid int64, epoch int16, commit bool) (int64, error) {
	p, err := l.s.offsetsPartition()
	if err != nil {
		return -1, err
	}
	return writeMarker(p, pid, epoch, commit)
}

// replayOffsets replays the commits of the offsets topic t into the
// coordinator, up to the first damaged batch (ErrCorrupt): plain commits
// at once, those of a transactional batch as pending in its producer's
// transaction, and the producers' COMMIT and ABORT markers, as Kafka's
// GroupMetadataManager loads the partition.
func (s *Store) replayOffsets(t *topic.Topic) error {
	p := t.Partitions()[0]
	next, err := s.replayOffsetsFrom(p, p.StartOffset())
	s.groupsTail.next, s.groupsTail.err = next, err
	return err
}

// replayOffsetsFrom is replayOffsets from offset from on, up to the end
// of p as of the call; it returns the offset after the last batch it
// replayed.
func (s *Store) replayOffsetsFrom(p *partition.Partition, from int64) (int64, error) {
	var buf []byte
	var d log.Decoder
	d.Limit = p.MaxDecompressed()
	for off := from; ; {
		var err error
		if buf, err = p.ReadBatches(buf, off, readBytes); err != nil {
			return off, fmt.Errorf("strata: replaying %s: %w", ConsumerOffsetsTopic, err)
		}
		if len(buf) == 0 {
			return off, nil
		}
		it := log.NewBatchIter(buf)
		for it.Next() {
			h := it.Header()
			if err := s.replayBatch(&d, it.Batch(), h, off); err != nil {
				return off, fmt.Errorf("strata: replaying %s: %w", ConsumerOffsetsTopic, err)
			}
			off = max(off, h.NextOffset())
		}
		if err := it.Err(); err != nil {
			return off, fmt.Errorf("strata: replaying %s: %w", ConsumerOffsetsTopic, err)
		}
	}
}

// replayBatch replays the records of one batch of the offsets topic from
// offset from on.
func (s *Store) replayBatch(d *log.Decoder, batch []byte, h log.BatchHeader, from int64) error {
	if h.IsControl() {
		// A transaction's marker; the other control records are not a
		// topic's.
		if h.BaseOffset < from {
			return nil
		}
		switch typ, _, ok, err := log.ParseControlBatch(d, batch, h); {
		case err != nil:
			s.opts.Logger.Warn("strata: skipping a damaged control batch", "offset", h.BaseOffset, "err", err)
		case ok && (typ == log.ControlCommit || typ == log.ControlAbort):
			s.groups.CompleteTxn(h.ProducerID, typ == log.ControlCommit)
		}
		return nil
	}
	ri, err := d.Iter(batch, h)
	if err != nil {
		return err
	}
	var commits []group.Commit
	var r Record
	for ri.Next(&r) {
		if r.Offset < from {
			continue
		}
		c, err := group.DecodeCommit(r.Key, r.Value)
		switch {
		case errors.Is(err, group.ErrNotOffsetCommit):
			s.replayMetadata(r)
			continue
		case err != nil:
			s.opts.Logger.Warn("strata: skipping a damaged commit record", "offset", r.Offset, "err", err)
			continue
		}
		commits = append(commits, c)
	}
	if err := ri.Err(); err != nil {
		return err
	}
	switch {
	case h.IsTransactional():
		s.groups.ReplayTxn(h.ProducerID, commits...)
	default:
		s.groups.Replay(commits...)
	}
	return nil
}
