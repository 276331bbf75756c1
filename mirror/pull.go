package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/topic"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultPullProgress is the store topic that holds Pull's progress.
const DefaultPullProgress = "strata-pull.progress"

// PullOptions configure Pull. The zero value of a field means its default.
type PullOptions struct {
	// Brokers are the source cluster's seed brokers, host:port. Required.
	Brokers []string
	// Topics are the cluster's topics to copy. Required.
	Topics []string
	// Rename gives the store's topic name for a cluster topic; nil keeps
	// it.
	Rename func(topic string) string
	// Progress is the store topic, compacted, that holds Pull's progress:
	// a record per partition copied, keyed "topic/partition" (the store's
	// topic), whose value is the cluster's offset after the last record
	// copied, as a decimal (default DefaultPullProgress). Give each Pull
	// of a store its own.
	Progress string
	// Follow keeps copying until ctx ends; otherwise Pull stops at the
	// cluster's last stable offsets of when it started.
	Follow bool
	// BatchRecords is how many records one store transaction copies at
	// most (default DefaultBatchRecords).
	BatchRecords int
	// ClientOptions are added to the franz-go client's options (TLS, SASL).
	ClientOptions []kgo.Opt
	// Logger receives Pull's notes (nil: discarded).
	Logger *slog.Logger
}

// PulledPartition is one partition's result of Pull.
type PulledPartition struct {
	Topic       string // the cluster's topic
	TargetTopic string // the store's
	Partition   int
	// End is the cluster's last stable offset when Pull started (for
	// Follow, when it last looked); Next the cluster offset Pull resumes
	// from; Copied the records this call copied.
	End, Next, Copied int64
}

// Pull copies topics of a Kafka cluster into dst, the way back from
// Kafka: for local development, a test fixture, a replay. It creates each
// topic in the store with the cluster's partition count and the configs
// Strata has (a LogAppendTime topic as CreateTime, keeping the cluster's
// timestamps), and appends each record the cluster's read_committed
// consumers read to the same partition number with its key, value, headers
// and timestamp. Each batch is one store transaction together with the
// progress, committed as the offsets of Group, so a Pull that stops at any
// point resumes without a record lost or doubled. The store's offsets are
// its own: dense, where the cluster's have gaps. dst must be writable.
func Pull(ctx context.Context, dst *strata.Store, opts PullOptions) ([]PulledPartition, error) {
	if dst == nil || len(opts.Brokers) == 0 || len(opts.Topics) == 0 {
		return nil, fmt.Errorf("%w: Pull needs a store, Brokers and Topics", ErrInvalidOptions)
	}
	if opts.Progress == "" {
		opts.Progress = DefaultPullProgress
	}
	if opts.BatchRecords < 0 {
		return nil, fmt.Errorf("%w: BatchRecords %d, want 0 (default) or more", ErrInvalidOptions, opts.BatchRecords)
	}
	if opts.BatchRecords == 0 {
		opts.BatchRecords = DefaultBatchRecords
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	admCl, err := kgo.NewClient(append(slices.Clone(opts.ClientOptions), kgo.SeedBrokers(opts.Brokers...))...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)

	parts, err := pullTopics(ctx, adm, dst, opts)
	if err != nil {
		return nil, err
	}
	byTP := make(map[string]map[int32]*PulledPartition)
	start := make(map[string]map[int32]kgo.Offset)
	left := 0
	for i := range parts {
		p := &parts[i]
		if byTP[p.Topic] == nil {
			byTP[p.Topic] = make(map[int32]*PulledPartition)
			start[p.Topic] = make(map[int32]kgo.Offset)
		}
		byTP[p.Topic][int32(p.Partition)] = p
		start[p.Topic][int32(p.Partition)] = kgo.NewOffset().At(p.Next)
		if opts.Follow || p.Next < p.End {
			left++
		}
	}
	if left == 0 {
		return parts, nil
	}
	cl, err := kgo.NewClient(append(slices.Clone(opts.ClientOptions),
		kgo.SeedBrokers(opts.Brokers...),
		kgo.ConsumePartitions(start),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Markers come through so that Pull sees it reached the end
		// when a partition ends with one; they are not copied.
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	defer cl.Close()

	for opts.Follow || left > 0 {
		fs := cl.PollRecords(ctx, opts.BatchRecords)
		if ctx.Err() != nil {
			if opts.Follow {
				return parts, nil
			}
			return parts, fmt.Errorf("mirror: pull stopped before the cluster's end: %w", ctx.Err())
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("mirror: fetch %s/%d: %w", t, p, err) })
		if ferr != nil {
			return parts, ferr
		}
		batch := make(map[*PulledPartition][]*kgo.Record)
		var order []*PulledPartition
		fs.EachRecord(func(r *kgo.Record) {
			p := byTP[r.Topic][r.Partition]
			if p == nil || r.Offset < p.Next {
				return
			}
			if _, ok := batch[p]; !ok {
				order = append(order, p)
			}
			batch[p] = append(batch[p], r)
		})
		if len(order) == 0 {
			continue
		}
		if err := pullBatch(ctx, dst, opts, order, batch); err != nil {
			return parts, err
		}
		for _, p := range order {
			rs := batch[p]
			was := p.Next < p.End
			p.Next = rs[len(rs)-1].Offset + 1
			for _, r := range rs {
				if !r.Attrs.IsControl() {
					p.Copied++
				}
			}
			if !opts.Follow && was && p.Next >= p.End {
				left--
			}
		}
	}
	return parts, nil
}

// pullBatch appends a poll's records, partition by partition, and the new
// progress in one store transaction.
func pullBatch(ctx context.Context, dst *strata.Store, opts PullOptions, order []*PulledPartition, batch map[*PulledPartition][]*kgo.Record) error {
	txn, err := dst.BeginTxn(ctx, strata.TxnOptions{ID: opts.Progress})
	if err != nil {
		return fmt.Errorf("mirror: pull: %w", err)
	}
	progress := make([]strata.Record, 0, len(order))
	for _, p := range order {
		rs := batch[p]
		recs := make([]strata.Record, 0, len(rs))
		for _, r := range rs {
			if r.Attrs.IsControl() {
				continue
			}
			rec := strata.Record{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
			for _, h := range r.Headers {
				rec.Headers = append(rec.Headers, strata.Header{Key: h.Key, Value: h.Value})
			}
			recs = append(recs, rec)
		}
		if len(recs) > 0 {
			if err := txn.AppendTo(ctx, p.TargetTopic, p.Partition, recs...); err != nil {
				_ = txn.Abort(context.WithoutCancel(ctx))
				return fmt.Errorf("mirror: pull %s/%d: %w", p.Topic, p.Partition, err)
			}
		}
		progress = append(progress, strata.Record{
			Key:   []byte(p.TargetTopic + "/" + strconv.Itoa(p.Partition)),
			Value: strconv.AppendInt(nil, rs[len(rs)-1].Offset+1, 10),
		})
	}
	if err := txn.AppendTo(ctx, opts.Progress, 0, progress...); err != nil {
		_ = txn.Abort(context.WithoutCancel(ctx))
		return fmt.Errorf("mirror: pull: %w", err)
	}
	if err := txn.Commit(ctx); err != nil {
		return fmt.Errorf("mirror: pull: %w", err)
	}
	return nil
}

// pullTopics creates the store's topics for the cluster's and returns the
// partitions with their ends and progress.
func pullTopics(ctx context.Context, adm *kadm.Client, dst *strata.Store, opts PullOptions) ([]PulledPartition, error) {
	td, err := adm.ListTopics(ctx, opts.Topics...)
	if err != nil {
		return nil, fmt.Errorf("mirror: describe the cluster's topics: %w", err)
	}
	cfgs, err := adm.DescribeTopicConfigs(ctx, opts.Topics...)
	if err != nil {
		return nil, fmt.Errorf("mirror: describe the cluster's topic configs: %w", err)
	}
	ends, err := adm.ListCommittedOffsets(ctx, opts.Topics...)
	if err != nil {
		return nil, fmt.Errorf("mirror: list the cluster's offsets: %w", err)
	}
	starts, err := adm.ListStartOffsets(ctx, opts.Topics...)
	if err != nil {
		return nil, fmt.Errorf("mirror: list the cluster's offsets: %w", err)
	}
	err = dst.CreateTopic(opts.Progress, strata.TopicConfig{CleanupPolicy: strata.CleanupCompact, Retention: -1})
	if err != nil && !errors.Is(err, strata.ErrTopicExists) {
		return nil, fmt.Errorf("mirror: pull: create %q: %w", opts.Progress, err)
	}
	done, err := pullProgress(ctx, dst, opts.Progress)
	if err != nil {
		return nil, err
	}
	var out []PulledPartition
	for _, name := range opts.Topics {
		d, ok := td[name]
		if !ok || d.Err != nil {
			return nil, unknownTopicError(name)
		}
		tgt := name
		if opts.Rename != nil {
			tgt = opts.Rename(name)
		}
		cfg := strata.TopicConfig{Partitions: len(d.Partitions)}
		if rc, err := cfgs.On(name, nil); err == nil {
			for _, c := range rc.Configs {
				v := c.MaybeValue()
				if !topic.IsKafkaConfig(c.Key) || v == "" || c.Key == "message.timestamp.type" {
					continue
				}
				if err := topic.SetKafkaConfig(&cfg, c.Key, v); err != nil {
					opts.Logger.Warn("mirror: pull: a config Strata takes otherwise is left at its default", "topic", name, "config", c.Key, "value", v, "err", err)
				}
			}
		}
		err := dst.CreateTopic(tgt, cfg)
		switch {
		case errors.Is(err, strata.ErrTopicExists):
			desc, derr := dst.DescribeTopic(tgt)
			if derr != nil {
				return nil, derr
			}
			if len(desc.Partitions) < len(d.Partitions) {
				if err := dst.CreatePartitions(tgt, len(d.Partitions)); err != nil {
					return nil, fmt.Errorf("mirror: pull: %w", err)
				}
			}
		case err != nil:
			return nil, fmt.Errorf("mirror: pull: create %q: %w", tgt, err)
		}
		for p := range len(d.Partitions) {
			pp := PulledPartition{Topic: name, TargetTopic: tgt, Partition: p}
			if e, ok := ends.Lookup(name, int32(p)); ok {
				pp.End = e.Offset
			}
			if s, ok := starts.Lookup(name, int32(p)); ok {
				pp.Next = s.Offset
			}
			if next, ok := done[tgt+"/"+strconv.Itoa(p)]; ok {
				pp.Next = max(pp.Next, next)
			}
			out = append(out, pp)
		}
	}
	return out, nil
}

// pullProgress reads the progress topic: the last offset of each key.
func pullProgress(ctx context.Context, dst *strata.Store, name string) (map[string]int64, error) {
	v := dst.View(strata.ReadCommitted)
	out := make(map[string]int64)
	off, err := v.ListOffsets(name, 0, strata.Earliest)
	if err != nil {
		return nil, fmt.Errorf("mirror: pull: %w", err)
	}
	end, err := v.ListOffsets(name, 0, strata.Latest)
	if err != nil {
		return nil, fmt.Errorf("mirror: pull: %w", err)
	}
	for off < end {
		recs, err := v.Read(ctx, name, 0, off, 1000)
		if err != nil {
			return nil, fmt.Errorf("mirror: pull: %w", err)
		}
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			n, err := strconv.ParseInt(string(r.Value), 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("mirror: pull: %s offset %d holds %q, not a progress record", name, r.Offset, r.Value)
			}
			out[string(r.Key)] = n
		}
		off = recs[len(recs)-1].Offset + 1
	}
	return out, nil
}
