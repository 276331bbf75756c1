package topic

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/stratalog/strata/compaction"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/retention"
	"github.com/stratalog/strata/vfs"
)

// ErrNoPartition means a partition number is out of the topic's range.
var ErrNoPartition = errors.New("topic: no such partition")

// Topic is a named set of partitions with its configuration and its
// partitioner. It is safe for concurrent use.
type Topic struct {
	name   string
	id     ID
	cfg    Config
	parts  []*partition.Partition
	sticky StickyPartitioner
}

// Open opens the partitions of topic name, whose id is id, under root —
// the directories "<name>-0" … "<name>-<n-1>", created if missing — with
// cfg (defaults filled) on top of base, the store's clock, logger and flush
// policy. clean says whether the store shut down cleanly (see
// partition.Open). Each partition directory's partition.metadata is
// written if it does not name id (one naming another is logged).
func Open(fsys vfs.FS, root, name string, id ID, cfg Config, base partition.Config, clean bool) (*Topic, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if id.IsZero() {
		return nil, fmt.Errorf("topic: %s has the zero topic id: %w", name, ErrInvalidID)
	}
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	t := &Topic{name: name, id: id, cfg: cfg}
	pcfg := cfg.partitionConfig(base)
	if cfg.Sync == (partition.SyncPolicy{}) {
		pcfg.Sync = base.Sync
	}
	for i := range cfg.Partitions {
		dir := filepath.Join(root, PartitionDir(name, i))
		p, err := partition.Open(fsys, dir, pcfg, clean)
		if err == nil {
			t.parts = append(t.parts, p)
			var was ID
			if was, err = ensureMetadata(fsys, dir, id); err == nil && !was.IsZero() && was != id {
				p.Config().Logger.Warn("topic: partition.metadata named another topic id; rewrote it with the registry's",
					"dir", dir, "was", was.String(), "id", id.String())
			}
		}
		if err != nil {
			_ = t.Close()
			return nil, fmt.Errorf("topic: opening %s: %w", name, err)
		}
	}
	return t, nil
}

// Name returns the topic's name.
func (t *Topic) Name() string { return t.name }

// ID returns the topic's id.
func (t *Topic) ID() ID { return t.id }

// Config returns the topic's configuration, defaults filled in.
func (t *Topic) Config() Config { return t.cfg }

// NumPartitions returns the number of partitions.
func (t *Topic) NumPartitions() int { return len(t.parts) }

// Partition returns partition i, or ErrNoPartition with the valid range.
func (t *Topic) Partition(i int) (*partition.Partition, error) {
	if i < 0 || i >= len(t.parts) {
		return nil, fmt.Errorf("topic: partition %d of %s out of range [0, %d): %w", i, t.name, len(t.parts), ErrNoPartition)
	}
	return t.parts[i], nil
}

// Partitions returns the partitions in order.
func (t *Topic) Partitions() []*partition.Partition { return t.parts }

// Route returns the partition for a record key: Kafka's murmur2 partition for
// a non-nil key (empty included), the current sticky partition for a nil
// one. Call NextBatch after each batch of key-less records.
func (t *Topic) Route(key []byte) int {
	if key == nil {
		return t.sticky.Partition(len(t.parts))
	}
	return KeyPartition(key, len(t.parts))
}

// NextBatch moves key-less records to another partition, as Kafka's sticky
// partitioner does when a batch is complete.
func (t *Topic) NextBatch() { t.sticky.NextBatch(len(t.parts)) }

// Close closes every partition and returns the first error.
func (t *Topic) Close() error {
	var errs []error
	for _, p := range t.parts {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// RetentionPolicy is the retention policy of the topic's configuration:
// time and size apply unless the cleanup policy is compact only; the start
// offset is filled in by each partition.
func (t *Topic) RetentionPolicy() retention.Policy {
	p := retention.Policy{RetentionMs: -1, RetentionBytes: t.cfg.RetentionBytes, DeleteByTimeAndSize: t.cfg.CleanupPolicy.Deletes()}
	if t.cfg.Retention >= 0 {
		p.RetentionMs = t.cfg.Retention.Milliseconds()
	}
	return p
}

// EnforceRetention applies the topic's retention policy to every partition
// at time now and returns how many segments went.
func (t *Topic) EnforceRetention(now time.Time) (int, error) {
	policy := t.RetentionPolicy()
	total := 0
	var errs []error
	for _, p := range t.parts {
		n, err := p.EnforceRetention(now, policy)
		total += n
		errs = append(errs, err)
	}
	return total, errors.Join(errs...)
}

// Compacted reports whether the topic's cleanup policy includes compact.
func (t *Topic) Compacted() bool {
	return t.cfg.CleanupPolicy.Compacts()
}

// Compact cleans every partition of a compacted topic that is due (see
// partition.Compact) with the topic's compaction settings and an offset map
// of bufferBytes, and returns what the cleanings did together.
func (t *Topic) Compact(now time.Time, bufferBytes int) (compaction.Stats, error) {
	var total compaction.Stats
	if !t.Compacted() {
		return total, nil
	}
	cfg := compaction.Config{
		MinCleanableDirtyRatio: t.cfg.MinCleanableDirtyRatio,
		DeleteRetention:        t.cfg.DeleteRetention,
		MinCompactionLag:       t.cfg.MinCompactionLag,
		MaxCompactionLag:       t.cfg.MaxCompactionLag,
		BufferBytes:            bufferBytes,
	}
	var errs []error
	for _, p := range t.parts {
		st, err := p.Compact(now, cfg)
		total.Add(st)
		errs = append(errs, err)
	}
	return total, errors.Join(errs...)
}
