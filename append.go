package strata

import (
	"context"
	"fmt"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
)

// Record is a Kafka record: Key (nil means none, distinct from empty),
// Value (nil is a tombstone), Headers, Timestamp (zero means "now" when
// appended) and, when read, its Offset.
type Record = log.Record

// Header is a record header: a string key and a value (nil distinct from
// empty).
type Header = log.Header

// Position is where an appended record landed.
type Position struct {
	Partition int
	Offset    int64
}

// Append appends records to a topic and returns, in the same order, the
// partition and offset each one got.
//
// Each record is routed as Kafka's producer routes it: a record with a key
// (an empty key included) goes to partition murmur2(key) % partitions, so a
// key keeps its partition and its order; records without a key go to one
// sticky partition, which moves to another partition after each call that
// used it (Kafka's sticky partitioner, KIP-480). Use AppendTo to choose the
// partition yourself.
//
// The records for each partition are written as one batch, in one piece.
// Every batch is encoded and checked before anything is written, so an
// unknown topic, no records, or a batch over the topic's MaxBatchBytes
// (ErrBatchTooLarge) changes nothing. An I/O error while writing to one
// partition can leave the batches already written to others in place.
//
// Append returns when the records are in the OS (they survive a crash of
// the process); under SyncAlways, after an fsync. ctx is checked before
// anything is written.
func (s *Store) Append(ctx context.Context, topicName string, records ...Record) (_ []Position, err error) {
	if err := s.checkWritable("append"); err != nil {
		return nil, err
	}
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	t, err := s.userTopic("append", topicName)
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("strata: append to %s: %w", topicName, ErrNoRecords)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pos := make([]Position, len(records))
	keyless := false
	first := -1
	same := true
	for i := range records {
		part := t.Route(records[i].Key)
		keyless = keyless || records[i].Key == nil
		pos[i].Partition = part
		if first < 0 {
			first = part
		}
		same = same && part == first
	}
	if same {
		base, err := s.appendTo(t, first, records)
		if err != nil {
			return nil, err
		}
		for i := range pos {
			pos[i].Offset = base + int64(i)
		}
	} else if err := s.appendGroups(t, records, pos); err != nil {
		return nil, err
	}
	if keyless {
		t.NextBatch()
	}
	return pos, nil
}

// appendGroups writes records that go to several partitions: one batch per
// partition, all encoded before any is written.
func (s *Store) appendGroups(t *topic.Topic, records []Record, pos []Position) error {
	order := []int{}
	groups := map[int][]int{}
	for i, p := range pos {
		if _, ok := groups[p.Partition]; !ok {
			order = append(order, p.Partition)
		}
		groups[p.Partition] = append(groups[p.Partition], i)
	}
	batches := make([]partition.EncodedBatch, len(order))
	for gi, part := range order {
		p, err := t.Partition(part)
		if err != nil {
			return err
		}
		recs := make([]Record, len(groups[part]))
		for j, i := range groups[part] {
			recs[j] = records[i]
		}
		if batches[gi], err = p.Encode(nil, recs); err != nil {
			return err
		}
	}
	for gi, part := range order {
		p, _ := t.Partition(part)
		base, err := p.AppendEncoded(batches[gi])
		if err != nil {
			return err
		}
		for j, i := range groups[part] {
			pos[i].Offset = base + int64(j)
		}
	}
	return nil
}

// AppendTo appends records to one partition of a topic, as one batch, and
// returns the offset of the first; the others follow densely. See Append.
func (s *Store) AppendTo(ctx context.Context, topicName string, part int, records ...Record) (_ int64, err error) {
	if err := s.checkWritable("append"); err != nil {
		return -1, err
	}
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	t, err := s.userTopic("append", topicName)
	if err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return s.appendTo(t, part, records)
}

func (s *Store) appendTo(t *topic.Topic, part int, records []Record) (int64, error) {
	p, err := t.Partition(part)
	if err != nil {
		return 0, err
	}
	return p.Append(records)
}
