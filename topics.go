package strata

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/vfs"
)

// CreateTopic creates a topic with cfg (zero fields mean the defaults) and
// its partitions' directories, then records it in the store's registry,
// written atomically. A name that breaks Kafka's rule is ErrInvalidTopic, a
// name starting with "__" is ErrReservedTopic, an existing one is
// ErrTopicExists; none of them touches a file.
func (s *Store) CreateTopic(name string, cfg TopicConfig) (err error) {
	if err := s.checkWritable("create topic"); err != nil {
		return err
	}
	defer wrapErr(&err)
	if err := s.checkUserTopic("", name); err != nil {
		return err
	}
	return s.createTopic(name, cfg)
}

func (s *Store) createTopic(name string, cfg TopicConfig) error {
	if err := s.checkWritable("create topic"); err != nil {
		return err
	}
	if err := topic.ValidateName(name); err != nil {
		return err
	}
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	old := *s.topics.Load()
	if _, ok := old[name]; ok {
		return fmt.Errorf("strata: topic %q: %w", name, ErrTopicExists)
	}
	if s.orphans[name] {
		return fmt.Errorf("strata: topic %q: partition directories of the name are there, but %s, which would list them, was missing at Open: "+
			"rebuild it with RebuildRegistry to keep their data, or remove them: %w", name, topicsFile, ErrTopicExists)
	}
	if vfs.IsOS(s.topicFS) {
		if err := checkRoom(name, cfg.Partitions); err != nil {
			return err
		}
	}
	if s.stray {
		if err := s.removeStrayTopicDirs(name); err != nil {
			return err
		}
	}
	// A new id: the topic is not any earlier topic of the name, whose
	// committed offsets (a DeleteTopic a crash interrupted may have left
	// them) name the old id.
	t, err := topic.Create(s.topicFS, s.dir, name, topic.NewID(), cfg, s.partitionBase())
	if err != nil {
		_ = s.removePartitionDirs(name, cfg.Partitions)
		return err
	}
	next := maps.Clone(old)
	next[name] = t
	if err := writeRegistry(s.fsys, s.dir, entries(next)); err != nil {
		_ = t.Close()
		_ = s.removePartitionDirs(name, cfg.Partitions)
		return err
	}
	s.topics.Store(&next)
	return nil
}

// removeStrayTopicDirs removes the partition directories named for topic
// name, which the registry does not hold: they belong to no topic (a
// DeleteTopic a crash interrupted, which may have removed some of them and
// not others), and their data must not come back under a new topic of the
// name. Only this topic's partitions are named name-<digits>: another
// topic's ("name-1" has "name-1-0") ends in a second -<digits>. Callers
// call it only when the directory may hold such directories (s.stray).
// s.mu must be held.
func (s *Store) removeStrayTopicDirs(name string) error {
	names, err := s.fsys.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("strata: reading %s: %w", s.dir, err)
	}
	for _, e := range names {
		if t, _, ok := topic.ParsePartitionDir(e); !ok || t != name {
			continue
		}
		dir := filepath.Join(s.dir, e)
		s.opts.Logger.Warn("strata: removing a partition directory of a topic that no longer exists (a deletion a crash stopped)",
			"dir", dir, "topic_id", topic.DirID(s.fsys, dir).String())
		if err := s.fsys.RemoveAll(dir); err != nil {
			return fmt.Errorf("strata: removing stale %s: %w", dir, err)
		}
	}
	return nil
}

// Each open partition holds three files open (.log, .index, .timeindex),
// each memory-mapped, and more as its segments roll.
const filesPerPartition = 3

// checkRoom refuses, with ErrInvalidConfig, a topic of n partitions that
// would not fit the files and memory mappings this process may still open
// (RLIMIT_NOFILE, vm.max_map_count), keeping a margin for everything else:
// creating it would fail midway with "too many open files". Small topics
// are not checked (reading the counts costs more than creating them), nor
// are topics on a file system whose files are not the operating system's
// (vfs.IsOS), which hold no descriptor.
func checkRoom(name string, n int) error {
	const margin = 256
	need := n * filesPerPartition
	if need < margin {
		return nil
	}
	files, mappings := resourceRoom()
	for _, lim := range []struct {
		room int
		what string
	}{{files, "open files (RLIMIT_NOFILE; raise it with ulimit -n)"}, {mappings, "memory mappings (vm.max_map_count)"}} {
		if lim.room >= 0 && need > lim.room-margin {
			fit := max(0, (lim.room-margin)/filesPerPartition)
			return fmt.Errorf("strata: topic %q of %d partitions needs %d more %s, this process has room for %d, enough for %d partitions: %w",
				name, n, need, lim.what, max(0, lim.room-margin), fit, ErrInvalidConfig)
		}
	}
	return nil
}

// DeleteTopic removes a topic and its data: it leaves the registry first
// (written atomically), then its partitions are closed and their
// directories removed (renamed "...-delete" first, so that a crash midway
// leaves nothing Open would mistake for data).
func (s *Store) DeleteTopic(name string) (err error) {
	if err := s.checkWritable("delete topic"); err != nil {
		return err
	}
	defer wrapErr(&err)
	if err := s.checkUserTopic("", name); err != nil {
		return err
	}
	id, err := s.deleteTopic(name)
	if err != nil {
		return err
	}
	s.deleteTopicOffsets(name, id)
	return nil
}

// deleteTopicOffsets deletes every group's committed offsets for a deleted
// topic, whose id was id, as Kafka does, so that a topic created again
// under the name starts from its beginning for them, even for groups whose
// members subscribe to it. Offsets committed for a topic of the name
// created meanwhile stay. A failure leaves offsets that nothing reads (their
// id is the deleted topic's); the next Open deletes them.
func (s *Store) deleteTopicOffsets(name string, id topic.ID) {
	if err := s.groups.DeleteTopic(name, id); err != nil {
		s.opts.Logger.Warn("strata: could not delete the offsets of a deleted topic", "topic", name, "err", err)
	}
}

// deleteTopic removes the topic from the registry and its data, and
// returns its id.
func (s *Store) deleteTopic(name string) (topic.ID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return topic.ID{}, ErrClosed
	}
	old := *s.topics.Load()
	t, ok := old[name]
	if !ok {
		return topic.ID{}, fmt.Errorf("strata: topic %q: %w", name, ErrUnknownTopic)
	}
	next := maps.Clone(old)
	delete(next, name)
	if err := writeRegistry(s.fsys, s.dir, entries(next)); err != nil {
		return topic.ID{}, err
	}
	s.topics.Store(&next)
	_ = t.Close()
	return t.ID(), s.removePartitionDirs(name, t.NumPartitions())
}

// removePartitionDirs removes the directories of a topic's partitions
// (those that exist): each is renamed "...-delete" first, so that a crash
// midway leaves nothing Open would mistake for data. s.mu must be held.
func (s *Store) removePartitionDirs(name string, partitions int) (err error) {
	defer func() {
		if err != nil {
			s.stray = true // some may be left
		}
	}()
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	for i := range partitions {
		dir := filepath.Join(s.dir, topic.PartitionDir(name, i))
		gone := dir + "." + stamp + deleteSuffix
		if err := s.fsys.Rename(dir, gone); errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return fmt.Errorf("strata: deleting %s: %w", dir, err)
		}
		if err := s.fsys.RemoveAll(gone); err != nil {
			return fmt.Errorf("strata: deleting %s: %w", dir, err)
		}
	}
	return s.fsys.SyncDir(s.dir)
}

// TopicDescription describes a topic and its partitions.
type TopicDescription struct {
	Name       string
	ID         TopicID     // tells the topic from earlier ones of its name
	Config     TopicConfig // defaults filled in
	Partitions []PartitionDescription
}

// PartitionDescription describes one partition.
type PartitionDescription struct {
	Partition   int
	StartOffset int64 // first retained offset
	EndOffset   int64 // end of what readers see: the next offset to be assigned, once the last append is visible (see ListOffsets)
	Segments    int
	Bytes       int64 // bytes of segment files (.log)
	// OldestTimestamp and NewestTimestamp are the timestamp of the record
	// at StartOffset and the largest record timestamp; zero when empty.
	OldestTimestamp time.Time
	NewestTimestamp time.Time
}

// DescribeTopic describes a topic: its configuration and, per partition,
// offsets, segments, bytes and the timestamps of its oldest and newest
// records. It describes the store's own __consumer_offsets too
// (ConsumerOffsetsTopic), once the first commit has created it.
func (s *Store) DescribeTopic(name string) (_ TopicDescription, err error) {
	defer wrapErr(&err)
	t, err := s.internalTopic(name)
	if err != nil {
		return TopicDescription{}, err
	}
	d := TopicDescription{Name: name, ID: t.ID(), Config: t.Config()}
	for i, p := range t.Partitions() {
		pd := PartitionDescription{Partition: i, StartOffset: p.StartOffset(), EndOffset: p.HighWatermark()}
		newest := int64(-1)
		for _, seg := range p.Segments() {
			pd.Segments++
			pd.Bytes += seg.Bytes
			newest = max(newest, seg.MaxTimestamp)
		}
		if pd.EndOffset > pd.StartOffset {
			if newest >= 0 {
				pd.NewestTimestamp = time.UnixMilli(newest)
			}
			var r log.Record
			rd := p.NewReader(pd.StartOffset)
			if ok, err := rd.Next(&r); err == nil && ok {
				pd.OldestTimestamp = r.Timestamp
			}
			rd.Close()
		}
		d.Partitions = append(d.Partitions, pd)
	}
	return d, nil
}
