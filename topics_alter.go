package strata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/vfs"
)

// CreatePartitions raises topic name's partition count to total, as
// Kafka's CreatePartitions does: the new partitions are empty, records
// with a key hash over the new count from then on (so a key may move to
// another partition, as in Kafka), and producers, consumers, groups
// (which rebalance) and Lag see them. The count never goes down: a total
// not above the current count, or above topic.MaxPartitions, is
// ErrInvalidConfig, with the count; an internal topic is
// ErrReservedTopic. None of these touches a file.
//
// The new partitions' directories are created first, then the store's
// registry records the new count (written atomically): a crash midway
// leaves the topic with its old count (the next CreatePartitions removes
// the directories it left) or its new one.
func (s *Store) CreatePartitions(name string, total int) (err error) {
	if err := s.checkWritable("create partitions"); err != nil {
		return err
	}
	defer wrapErr(&err)
	if err := s.checkUserTopic("", name); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	t, err := s.lookupTopic(name)
	if err != nil {
		return err
	}
	have := t.NumPartitions()
	if total <= have || total > topic.MaxPartitions {
		return fmt.Errorf("strata: topic %q has %d partitions, asked for %d: the count can only grow, up to %d: %w",
			name, have, total, topic.MaxPartitions, ErrInvalidConfig)
	}
	if err := s.checkPartitionRoom(name, total-have); err != nil {
		return err
	}
	// Directories of the partitions to be are what an earlier call a
	// crash stopped left: never recorded, so no data of the topic's.
	if s.stray {
		if err := s.removeStalePartitions(name, have); err != nil {
			return err
		}
	}
	parts, err := t.OpenPartitions(s.topicFS, s.dir, total, s.partitionBase())
	if err != nil {
		s.stray = true // it may have made some of their directories
		return err
	}
	if err := s.recordTopicConfig(name, func(c *TopicConfig) { c.Partitions = total }); err != nil {
		for _, p := range parts {
			_ = p.Close()
		}
		_ = s.removeStalePartitions(name, have)
		return err
	}
	t.AddPartitions(parts)
	return nil
}

// checkPartitionRoom is checkRoom for n more partitions of a topic.
func (s *Store) checkPartitionRoom(name string, n int) error {
	if !vfs.IsOS(s.topicFS) {
		return nil
	}
	return checkRoom(name, n)
}

// removeStalePartitions removes the partition directories of topic name
// numbered from on, which the registry does not record; a failure sets
// s.stray, since some may be left. s.mu must be held.
func (s *Store) removeStalePartitions(name string, from int) (err error) {
	defer func() {
		if err != nil {
			s.stray = true
		}
	}()
	names, err := s.fsys.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("strata: reading %s: %w", s.dir, err)
	}
	removed := false
	for _, e := range names {
		if t, i, ok := topic.ParsePartitionDir(e); !ok || t != name || i < from {
			continue
		}
		dir := filepath.Join(s.dir, e)
		s.opts.Logger.Warn("strata: removing a partition directory beyond its topic's partition count (a CreatePartitions a crash stopped)", "dir", dir)
		if err := s.fsys.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("strata: removing stale %s: %w", dir, err)
		}
		removed = true
	}
	if removed {
		return s.fsys.SyncDir(s.dir)
	}
	return nil
}

// AlterTopicConfig changes topic name's configuration to cfg, zero fields
// meaning their defaults (Partitions zero keeps the count), and records it
// in the store's registry, written atomically: it applies at once and
// after the next Open. Start from DescribeTopic's Config and change what
// is to change. The settings that may change on a live topic are those
// retention and the cleaner read: Retention, RetentionBytes,
// MinCleanableDirtyRatio, DeleteRetention, MinCompactionLag and
// MaxCompactionLag; a change to any other (the partitions' own settings,
// fixed when they are opened; Partitions grows with CreatePartitions) or
// a value out of range is ErrInvalidConfig, naming the setting, and
// changes nothing. An internal topic is ErrReservedTopic.
func (s *Store) AlterTopicConfig(name string, cfg TopicConfig) (err error) {
	if err := s.checkWritable("alter topic config"); err != nil {
		return err
	}
	defer wrapErr(&err)
	if err := s.checkUserTopic("", name); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	t, err := s.lookupTopic(name)
	if err != nil {
		return err
	}
	old := t.Config()
	cfg, err = topic.CheckChange(old, cfg)
	if err != nil {
		return fmt.Errorf("strata: topic %q: %w", name, err)
	}
	if cfg == old {
		return nil
	}
	if err := s.recordTopicConfig(name, func(c *TopicConfig) { *c = cfg }); err != nil {
		return err
	}
	return t.SetConfig(cfg)
}

// recordTopicConfig writes the store's registry, atomically, with topic
// name's configuration changed by change. The caller holds s.mu.
func (s *Store) recordTopicConfig(name string, change func(*TopicConfig)) error {
	next := entries(*s.topics.Load())
	e := next[name]
	change(&e.Config)
	next[name] = e
	return writeRegistry(s.fsys, s.dir, next)
}
