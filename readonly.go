package strata

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/vfs"
)

// DefaultRefreshInterval is Options.RefreshInterval's default.
const DefaultRefreshInterval = partition.DefaultRefreshInterval

// readOnlyState is what a ReadOnly store keeps to follow the directory.
type readOnlyState struct {
	mu       sync.Mutex     // one refresh of the topics at a time
	registry []byte         // topics.json as last read
	checked  time.Time      // when it was last read
	retired  []*topic.Topic // the topics the last change removed or replaced
}

// openReadOnly is Open with Options.ReadOnly: see there.
func openReadOnly(dir string, o Options) (*Store, error) {
	fi, err := o.FS.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("strata: opening %s read-only: %w", dir, err)
	}
	if !fi.IsDir {
		return nil, fmt.Errorf("strata: %s is a file, not a directory: %w", dir, ErrInvalidConfig)
	}
	s := &Store{dir: dir, fsys: o.FS, topicFS: o.FS, opts: o, clean: true, readOnly: &readOnlyState{}}
	empty := map[string]*topic.Topic{}
	s.topics.Store(&empty)
	if err := s.refreshTopics(true); err != nil {
		return nil, err
	}
	if _, err := o.FS.Stat(filepath.Join(dir, topicsFile)); errors.Is(err, os.ErrNotExist) {
		// A Kafka log directory, or a store whose topics.json was lost:
		// the log says why its partition directories show no topics.
		names, err := o.FS.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("strata: listing %s: %w", dir, err)
		}
		if err := s.noteOrphans(names); err != nil {
			return nil, err
		}
	}
	s.groups = s.newCoordinator()
	if t, ok := (*s.topics.Load())[ConsumerOffsetsTopic]; ok {
		if err := s.replayOffsets(t); err != nil {
			// What the offsets topic holds up to the damage stays: the
			// owner recovers it, not a reader.
			s.opts.Logger.Warn("strata: "+ConsumerOffsetsTopic+" did not replay whole; committed offsets may be missing", "err", err)
		}
	}
	s.txns = newTxnCoordinator(s)
	if t, ok := (*s.topics.Load())[TransactionStateTopic]; ok {
		// Transactions lists the ids as they were at Open.
		if err := s.txns.replay(t); err != nil {
			s.opts.Logger.Warn("strata: "+TransactionStateTopic+" did not replay whole; transaction states may be missing", "err", err)
		}
	}
	return s, nil
}

// ReadOnly reports whether the store was opened with Options.ReadOnly.
func (s *Store) ReadOnly() bool { return s.readOnly != nil }

// checkWritable fails with ErrReadOnly on a ReadOnly store that is open
// (a closed one says ErrClosed where the call checks it); verb names the
// call.
func (s *Store) checkWritable(verb string) error {
	if s.readOnly == nil || s.closed.Load() {
		return nil
	}
	return fmt.Errorf("strata: %s: %w", verb, ErrReadOnly)
}

// maybeRefreshTopics refreshes a ReadOnly store's topics when
// RefreshInterval has passed since the last look.
func (s *Store) maybeRefreshTopics() {
	if s.readOnly == nil || s.closed.Load() {
		return
	}
	_ = s.refreshTopics(false)
}

// refreshTopics reads topics.json and, if it changed, opens the topics it
// added, drops those it removed (or that another topic of the name
// replaced) and applies changed configs. first is Open's call, whose
// failure to read the registry is Open's; later failures (a registry
// being replaced, a topic whose directories are not there yet) keep what
// was there, and the next refresh tries again.
func (s *Store) refreshTopics(first bool) error {
	ro := s.readOnly
	if first {
		ro.mu.Lock()
	} else if !ro.mu.TryLock() {
		return nil
	}
	defer ro.mu.Unlock()
	interval := s.opts.RefreshInterval
	if !first && time.Since(ro.checked) < interval {
		return nil
	}
	ro.checked = time.Now()
	path := filepath.Join(s.dir, topicsFile)
	data, err := vfs.ReadFile(s.fsys, path)
	if errors.Is(err, os.ErrNotExist) {
		data, err = nil, nil
	}
	if err != nil {
		if first {
			return fmt.Errorf("strata: reading %s: %w", path, err)
		}
		return nil
	}
	if !first && bytes.Equal(data, ro.registry) {
		return nil
	}
	reg, err := readRegistry(s.fsys, s.dir)
	if err != nil {
		if first {
			return err
		}
		return nil // replaced meanwhile, or damaged: what was read stays
	}
	old := *s.topics.Load()
	next := make(map[string]*topic.Topic, len(reg))
	complete := true
	for name, e := range reg {
		if e.ID.IsZero() {
			e.ID = topic.DirID(s.fsys, filepath.Join(s.dir, topic.PartitionDir(name, 0)))
		}
		if t, ok := old[name]; ok && (e.ID.IsZero() || t.ID() == e.ID) {
			next[name] = s.followConfig(t, e.Config)
			continue
		}
		id := e.ID
		if id.IsZero() {
			id = topic.NewID() // a registry of version 1 whose directory records none
		}
		t, err := topic.Open(s.topicFS, s.dir, name, id, e.Config, s.partitionBase(), true)
		if err != nil {
			// Created but not yet all there (its directories follow the
			// registry), or deleted meanwhile: the next refresh sees.
			complete = false
			if first {
				s.opts.Logger.Debug("strata: a topic of the registry did not open read-only", "topic", name, "err", err)
			}
			continue
		}
		next[name] = t
	}
	var retired []*topic.Topic
	for name, t := range old {
		if next[name] != t {
			retired = append(retired, t)
		}
	}
	if len(retired) > 0 {
		// Readers may still be reading a topic that went: it is closed
		// at the next change of the topics (or with the store), so that
		// a reader left open holds the files of one generation at most.
		for _, t := range ro.retired {
			_ = t.Close()
		}
		ro.retired = retired
	}
	if complete {
		ro.registry = data
	}
	s.topics.Store(&next)
	return nil
}

// followConfig applies the registry's config for the open topic t of a
// ReadOnly store, and opens the partitions it gained; what cannot be
// applied is left as it was.
func (s *Store) followConfig(t *topic.Topic, cfg TopicConfig) *topic.Topic {
	want, err := cfg.WithDefaults()
	if err != nil || want == t.Config() {
		return t
	}
	if want.Partitions > t.NumPartitions() {
		parts, err := t.OpenPartitions(s.topicFS, s.dir, want.Partitions, s.partitionBase())
		if err != nil {
			return t
		}
		t.AddPartitions(parts)
	}
	if err := t.SetConfig(want); err != nil {
		s.opts.Logger.Debug("strata: a topic's new config was not applied read-only", "topic", t.Name(), "err", err)
	}
	return t
}

// closeReadOnly closes what a ReadOnly store holds; it writes nothing.
func (s *Store) closeReadOnly() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	for _, t := range *s.topics.Load() {
		_ = t.Close()
	}
	s.readOnly.mu.Lock()
	defer s.readOnly.mu.Unlock()
	for _, t := range s.readOnly.retired {
		_ = t.Close()
	}
	s.readOnly.retired = nil
	return nil
}
