package topic

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stratalog/strata/compaction"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/retention"
	"github.com/stratalog/strata/vfs"
)

// ErrNoPartition means a partition number is out of the topic's range.
var ErrNoPartition = errors.New("topic: no such partition")

// Topic is a named set of partitions with its configuration and its
// partitioner. It is safe for concurrent use. Its partition count only
// grows (AddPartitions), and the settings that only the topic reads may
// change (SetConfig); every other setting is fixed when it is opened.
type Topic struct {
	name string
	id   ID
	// state is the configuration and the partitions, replaced whole by
	// AddPartitions and SetConfig (which their caller serialises).
	state  atomic.Pointer[topicState]
	sticky StickyPartitioner
}

// topicState is an immutable snapshot of a topic's configuration and
// partitions; cfg.Partitions is len(parts).
type topicState struct {
	cfg   Config
	parts []*partition.Partition
}

// Open opens the partitions of topic name, whose id is id, under root —
// the directories "<name>-0" … "<name>-<n-1>", created if missing — with
// cfg (defaults filled) on top of base, the store's clock, logger and flush
// policy. clean says whether the store shut down cleanly (see
// partition.Open). Each partition directory's partition.metadata is
// written if it does not name id (one naming another is logged).
func Open(fsys vfs.FS, root, name string, id ID, cfg Config, base partition.Config, clean bool) (*Topic, error) {
	return open(fsys, root, name, id, cfg, base, clean, false)
}

// Create is Open of a new topic, whose partition directories are new or
// were just removed: each partition.metadata is created without being
// read first (a directory that has one after all gets Open's treatment).
func Create(fsys vfs.FS, root, name string, id ID, cfg Config, base partition.Config) (*Topic, error) {
	return open(fsys, root, name, id, cfg, base, true, true)
}

func open(fsys vfs.FS, root, name string, id ID, cfg Config, base partition.Config, clean, fresh bool) (*Topic, error) {
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
	t := &Topic{name: name, id: id}
	parts, err := openPartitions(fsys, root, name, id, cfg, base, clean, fresh, 0, cfg.Partitions)
	if err != nil {
		return nil, err
	}
	t.state.Store(&topicState{cfg: cfg, parts: parts})
	return t, nil
}

// openPartitions opens partitions [from, to) of topic name, writing their
// partition.metadata (fresh: new partitions, whose file is created before
// any is looked for); on failure it closes those it opened.
func openPartitions(fsys vfs.FS, root, name string, id ID, cfg Config, base partition.Config, clean, fresh bool, from, to int) ([]*partition.Partition, error) {
	pcfg := cfg.partitionConfig(base)
	if cfg.Sync == (partition.SyncPolicy{}) {
		pcfg.Sync = base.Sync
	}
	var parts []*partition.Partition
	for i := from; i < to; i++ {
		dir := filepath.Join(root, PartitionDir(name, i))
		p, err := partition.Open(fsys, dir, pcfg, clean)
		if err == nil && pcfg.ReadOnly {
			parts = append(parts, p) // its partition.metadata is the owner's
		} else if err == nil {
			parts = append(parts, p)
			var was ID
			if was, err = ensureMetadata(fsys, dir, id, fresh); err == nil && !was.IsZero() && was != id {
				p.Config().Logger.Warn("topic: partition.metadata named another topic id; rewrote it with the registry's",
					"dir", dir, "was", was.String(), "id", id.String())
			}
		}
		if err != nil {
			for _, p := range parts {
				_ = p.Close()
			}
			return nil, fmt.Errorf("topic: opening %s: %w", name, err)
		}
	}
	return parts, nil
}

// OpenPartitions opens, under root, the partitions that growing the topic
// to total partitions adds (directories created if missing), with the
// topic's configuration on top of base, and returns them without adding
// them: the caller records the new count durably, then calls
// AddPartitions, or closes them. A total not above the current count
// (partitions are never removed) or above MaxPartitions is
// ErrInvalidConfig.
func (t *Topic) OpenPartitions(fsys vfs.FS, root string, total int, base partition.Config) ([]*partition.Partition, error) {
	st := t.state.Load()
	switch {
	case total <= len(st.parts):
		return nil, fmt.Errorf("topic: %s has %d partitions, asked for %d: a partition count can only grow: %w", t.name, len(st.parts), total, ErrInvalidConfig)
	case total > MaxPartitions:
		return nil, fmt.Errorf("topic: %d partitions out of range [1, %d]: %w", total, MaxPartitions, ErrInvalidConfig)
	}
	return openPartitions(fsys, root, t.name, t.id, st.cfg, base, true, true, len(st.parts), total)
}

// AddPartitions appends parts, which OpenPartitions opened, to the topic's
// partitions: from then on keys hash over the new count, and every holder
// of the topic sees them. Calls of AddPartitions and SetConfig must not
// run concurrently.
func (t *Topic) AddPartitions(parts []*partition.Partition) {
	st := t.state.Load()
	next := &topicState{cfg: st.cfg, parts: append(st.parts[:len(st.parts):len(st.parts)], parts...)}
	next.cfg.Partitions = len(next.parts)
	t.state.Store(next)
}

// SetConfig replaces the topic's configuration with cfg (defaults filled
// in). Only the settings the topic itself applies may differ from the
// current ones: Retention, RetentionBytes, MinCleanableDirtyRatio,
// DeleteRetention, MinCompactionLag and MaxCompactionLag (a zero one
// meaning its default); any other difference (Partitions grows with
// OpenPartitions and AddPartitions; zero keeps it), or a value out of
// range, is ErrInvalidConfig, naming the setting, and changes nothing.
// Calls of AddPartitions and SetConfig must not run concurrently.
func (t *Topic) SetConfig(cfg Config) error {
	st := t.state.Load()
	next, err := CheckChange(st.cfg, cfg)
	if err != nil {
		return fmt.Errorf("topic: %s: %w", t.name, err)
	}
	t.state.Store(&topicState{cfg: next, parts: st.parts})
	return nil
}

// CheckChange returns to with its defaults filled in if an open topic of
// configuration from may take it (see SetConfig), else the error saying
// why not.
func CheckChange(from, to Config) (Config, error) {
	if to.Partitions == 0 {
		to.Partitions = from.Partitions
	}
	to, err := to.WithDefaults()
	if err != nil {
		return from, err
	}
	// The settings that may change, taken as from's, must leave the two
	// equal.
	probe := to
	probe.Retention, probe.RetentionBytes = from.Retention, from.RetentionBytes
	probe.MinCleanableDirtyRatio, probe.DeleteRetention = from.MinCleanableDirtyRatio, from.DeleteRetention
	probe.MinCompactionLag, probe.MaxCompactionLag = from.MinCompactionLag, from.MaxCompactionLag
	if probe != from {
		return from, fmt.Errorf("%s: fixed once the topic is created (settable live: Retention, RetentionBytes, MinCleanableDirtyRatio, DeleteRetention, MinCompactionLag, MaxCompactionLag): %w",
			fixedDiff(from, probe), ErrInvalidConfig)
	}
	return to, nil
}

// Name returns the topic's name.
func (t *Topic) Name() string { return t.name }

// ID returns the topic's id.
func (t *Topic) ID() ID { return t.id }

// Config returns the topic's configuration, defaults filled in.
func (t *Topic) Config() Config { return t.state.Load().cfg }

// NumPartitions returns the number of partitions.
func (t *Topic) NumPartitions() int { return len(t.state.Load().parts) }

// Partition returns partition i, or ErrNoPartition with the valid range.
func (t *Topic) Partition(i int) (*partition.Partition, error) {
	parts := t.state.Load().parts
	if i < 0 || i >= len(parts) {
		return nil, fmt.Errorf("topic: partition %d of %s out of range [0, %d): %w", i, t.name, len(parts), ErrNoPartition)
	}
	return parts[i], nil
}

// Partitions returns the partitions in order (a snapshot: AddPartitions
// may add more).
func (t *Topic) Partitions() []*partition.Partition { return t.state.Load().parts }

// Route returns the partition for a record key: Kafka's murmur2 partition for
// a non-nil key (empty included), the current sticky partition for a nil
// one. Call NextBatch after each batch of key-less records.
func (t *Topic) Route(key []byte) int {
	n := t.NumPartitions()
	if n == 1 {
		return 0 // the only partition: no key needs hashing
	}
	if key == nil {
		return t.sticky.Partition(n)
	}
	return KeyPartition(key, n)
}

// NextBatch moves key-less records to another partition, as Kafka's sticky
// partitioner does when a batch is complete.
func (t *Topic) NextBatch() { t.sticky.NextBatch(t.NumPartitions()) }

// Close closes every partition and returns the first error.
func (t *Topic) Close() error {
	var errs []error
	for _, p := range t.Partitions() {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// RetentionPolicy is the retention policy of the topic's configuration:
// time and size apply unless the cleanup policy is compact only; the start
// offset is filled in by each partition.
func (t *Topic) RetentionPolicy() retention.Policy {
	cfg := t.Config()
	p := retention.Policy{RetentionMs: -1, RetentionBytes: cfg.RetentionBytes, DeleteByTimeAndSize: cfg.CleanupPolicy.Deletes()}
	if cfg.Retention >= 0 {
		p.RetentionMs = cfg.Retention.Milliseconds()
	}
	return p
}

// EnforceRetention applies the topic's retention policy to every partition
// at time now and returns how many segments went.
func (t *Topic) EnforceRetention(now time.Time) (int, error) {
	policy := t.RetentionPolicy()
	total := 0
	var errs []error
	for _, p := range t.Partitions() {
		n, err := p.EnforceRetention(now, policy)
		total += n
		errs = append(errs, err)
	}
	return total, errors.Join(errs...)
}

// Compacted reports whether the topic's cleanup policy includes compact.
func (t *Topic) Compacted() bool {
	return t.Config().CleanupPolicy.Compacts()
}

// Compact cleans every partition of a compacted topic that is due (see
// partition.Compact) with the topic's compaction settings and an offset map
// of bufferBytes, and returns what the cleanings did together.
func (t *Topic) Compact(now time.Time, bufferBytes int) (compaction.Stats, error) {
	var total compaction.Stats
	if !t.Compacted() {
		return total, nil
	}
	tc := t.Config()
	cfg := compaction.Config{
		MinCleanableDirtyRatio: tc.MinCleanableDirtyRatio,
		DeleteRetention:        tc.DeleteRetention,
		MinCompactionLag:       tc.MinCompactionLag,
		MaxCompactionLag:       tc.MaxCompactionLag,
		BufferBytes:            bufferBytes,
	}
	var errs []error
	for _, p := range t.Partitions() {
		st, err := p.Compact(now, cfg)
		total.Add(st)
		errs = append(errs, err)
	}
	return total, errors.Join(errs...)
}

// fixedDiff names the settings in which a and b differ, with their
// values.
func fixedDiff(a, b Config) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var diffs []string
	for i := range va.NumField() {
		if fa, fb := va.Field(i).Interface(), vb.Field(i).Interface(); fa != fb {
			diffs = append(diffs, fmt.Sprintf("%s %v (asked for %v)", va.Type().Field(i).Name, fa, fb))
		}
	}
	return strings.Join(diffs, ", ")
}
