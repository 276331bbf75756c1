package peers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kgoTopic is the one topic, of one partition, that the Kafka peers
// (kfake, strata-serve) write.
const kgoTopic = "bench"

// kgoTimeout bounds each call of a Kafka peer (each poll of a Scan), so
// that a broker that stops answering makes the call fail instead of hang.
const kgoTimeout = 30 * time.Second

// errKgo is what a Kafka peer returns when the broker's answer is not what
// was asked for (a record at the wrong offset, a missing partition).
var errKgo = errors.New("peers: unexpected answer from the Kafka broker")

// errNetRange is what the network peers return for a record index out of
// range.
var errNetRange = errors.New("peers: record index out of range")

// kgoLog is a Log over a Kafka broker at one address, driven by franz-go's
// kgo client: Append is one ProduceSync, Scan consumes the partition with
// the client's own consumer, Get is one Fetch request.
type kgoLog struct {
	cl      *kgo.Client
	topicID [16]byte
	addr    string
	n       int64 // records in the partition: the next offset
	// recs and ptrs are reused by Append: kgo is done with a record once
	// ProduceSync has returned.
	recs []kgo.Record
	ptrs []*kgo.Record
	// after runs once the client is closed (it stops the broker).
	after func() error
}

// kgoOptions are the client's options for o: no linger (each Append is
// sent at once), no compression (as every other peer stores its records),
// one partition chosen by the record itself. Durable asks for acks from
// every in-sync replica with kgo's default idempotent producer; otherwise
// the leader's ack alone, which Kafka's idempotence does not allow.
func kgoOptions(addr string, o Options) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(addr),
		kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(kgoTopic),
	}
	if o.Durable {
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	} else {
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	}
	return opts
}

// openKgo connects to the broker at addr, whose topic kgoTopic exists,
// and learns the topic's id and its end offset. after runs at Close, or
// now if openKgo fails.
func openKgo(addr string, o Options, after func() error) (_ *kgoLog, err error) {
	l := &kgoLog{addr: addr, after: after}
	defer func() {
		if err != nil {
			err = errors.Join(err, l.Close())
		}
	}()
	if l.cl, err = kgo.NewClient(kgoOptions(addr, o)...); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), kgoTimeout)
	defer cancel()

	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(kgoTopic)
	meta.Topics = append(meta.Topics, mt)
	resp, err := meta.RequestWith(ctx, l.cl)
	if err != nil {
		return nil, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, fmt.Errorf("peers: metadata of topic %s: %d topics, want 1 of 1 partition: %w", kgoTopic, len(resp.Topics), errKgo)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		return nil, fmt.Errorf("peers: metadata of topic %s: %w", kgoTopic, err)
	}
	l.topicID = resp.Topics[0].TopicID

	lo := kmsg.NewPtrListOffsetsRequest()
	lo.ReplicaID = -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = kgoTopic
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Timestamp = -1 // the end offset
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	lr, err := lo.RequestWith(ctx, l.cl)
	if err != nil {
		return nil, err
	}
	if len(lr.Topics) != 1 || len(lr.Topics[0].Partitions) != 1 {
		return nil, fmt.Errorf("peers: end offset of topic %s: no partition in the answer: %w", kgoTopic, errKgo)
	}
	p := lr.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return nil, fmt.Errorf("peers: end offset of topic %s: %w", kgoTopic, err)
	}
	l.n = p.Offset
	return l, nil
}

// Append produces recs with one ProduceSync and checks that they got the
// offsets that follow the ones before.
func (l *kgoLog) Append(recs []Rec) error {
	if len(recs) == 0 {
		return nil
	}
	if cap(l.recs) < len(recs) {
		l.recs = make([]kgo.Record, len(recs))
		l.ptrs = make([]*kgo.Record, len(recs))
	}
	l.recs, l.ptrs = l.recs[:len(recs)], l.ptrs[:len(recs)]
	for i, r := range recs {
		l.recs[i] = kgo.Record{Topic: kgoTopic, Key: r.Key, Value: r.Value}
		l.ptrs[i] = &l.recs[i]
	}
	ctx, cancel := context.WithTimeout(context.Background(), kgoTimeout)
	defer cancel()
	res := l.cl.ProduceSync(ctx, l.ptrs...)
	if err := res.FirstErr(); err != nil {
		return err
	}
	for i, r := range res {
		if r.Record.Offset != l.n+int64(i) {
			return fmt.Errorf("peers: record %d of %d produced at offset %d, want %d: %w", i, len(res), r.Record.Offset, l.n+int64(i), errKgo)
		}
	}
	l.n += int64(len(recs))
	clear(l.recs) // keep no references to the caller's slices
	return nil
}

// Scan consumes the partition from offset from with the client's consumer
// up to the end offset as of the call, then stops consuming it. Each poll
// has kgoTimeout to bring records.
func (l *kgoLog) Scan(from int64, fn func(i int64, key, value []byte) bool) error {
	end := l.n
	if from < 0 || from > end {
		return fmt.Errorf("peers: scan from %d out of range [0, %d]: %w", from, end, errNetRange)
	}
	if from == end {
		return nil
	}
	l.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{kgoTopic: {0: kgo.NewOffset().At(from)}})
	defer l.cl.RemoveConsumePartitions(map[string][]int32{kgoTopic: {0}})
	next := from
	for next < end {
		ctx, cancel := context.WithTimeout(context.Background(), kgoTimeout)
		fs := l.cl.PollFetches(ctx)
		cancel()
		if err := fs.Err(); err != nil {
			return err
		}
		var bad error
		stop := false
		for it := fs.RecordIter(); !it.Done() && !stop && bad == nil; {
			r := it.Next()
			switch {
			case r.Offset != next:
				bad = fmt.Errorf("peers: consumed offset %d, want %d: %w", r.Offset, next, errKgo)
			case !fn(next, r.Key, r.Value):
				stop = true
			}
			next++
		}
		if bad != nil || stop {
			return bad
		}
	}
	return nil
}

// Get fetches the batch that holds record i with one Fetch request (of
// at most one byte: the broker sends the first batch whole, as KIP-74
// has it) and decodes that record alone (findRecord).
func (l *kgoLog) Get(i int64, fn func(key, value []byte)) error {
	if i < 0 || i >= l.n {
		return fmt.Errorf("peers: record %d out of range [0, %d): %w", i, l.n, errNetRange)
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = 1
	req.SessionEpoch = -1 // no fetch session (KIP-227)
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = kgoTopic
	rt.TopicID = l.topicID // Fetch v13 names topics by id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset = i
	rp.PartitionMaxBytes = 1
	rp.CurrentLeaderEpoch = -1
	rp.LogStartOffset = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	ctx, cancel := context.WithTimeout(context.Background(), kgoTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, l.cl)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return fmt.Errorf("peers: fetch of offset %d: no partition in the answer: %w", i, errKgo)
	}
	p := &resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return err
	}
	key, value, err := findRecord(p.RecordBatches, i)
	if err != nil {
		return err
	}
	fn(key, value)
	return nil
}

// Close closes the client, then stops the broker.
func (l *kgoLog) Close() error {
	if l.cl != nil {
		l.cl.Close()
		l.cl = nil
	}
	var err error
	if l.after != nil {
		err = l.after()
		l.after = nil
	}
	return err
}
