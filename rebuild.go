package strata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/vfs"
)

// RebuildRegistry rebuilds the topic registry (topics.json) of the store in
// dir from its partition directories, for a store whose topics.json is
// damaged or lost: Open reports a damaged one with ErrCorrupt and names
// this function. It returns the topics it found.
//
// Every directory named "<topic>-<partition>" becomes a partition of its
// topic, with the topic id its partition.metadata records (a new one where
// none does); a topic has as many partitions as its highest-numbered
// directory says, missing ones being created empty at the next Open. The
// topics' configurations cannot be rebuilt: each gets the defaults, except
// that nothing is deleted by retention (Retention -1), and a topic whose
// directories hold a cleaner checkpoint is compacted. Set the
// configurations again after the next Open. A damaged topics.json is kept
// as topics.json.damaged.
//
// The store must not be open (ErrLocked). A registry that reads fine is
// left alone (ErrInvalidConfig).
func RebuildRegistry(dir string) (_ []string, err error) {
	defer wrapErr(&err)
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlockDir(lock)
	fsys := vfs.OS
	reg, err := readRegistry(fsys, dir)
	if err == nil && len(reg) > 0 {
		return nil, fmt.Errorf("strata: %s reads fine; nothing to rebuild: %w", filepath.Join(dir, topicsFile), ErrInvalidConfig)
	}
	counts, err := partitionDirs(fsys, dir)
	if err != nil {
		return nil, err
	}
	rebuilt := map[string]registryEntry{}
	for name, n := range counts {
		e := registryEntry{Config: TopicConfig{Partitions: n, Retention: -1}}
		if name == ConsumerOffsetsTopic {
			e.Config = offsetsTopicConfig
		}
		var ids []topic.ID
		for p := range n {
			pdir := filepath.Join(dir, topic.PartitionDir(name, p))
			if id := topic.DirID(fsys, pdir); !id.IsZero() && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
			if partition.WasCompacted(fsys, pdir) {
				e.Config.CleanupPolicy = CleanupCompact
			}
		}
		switch len(ids) {
		case 0:
			e.ID = topic.NewID()
		case 1:
			e.ID = ids[0]
		default:
			return nil, fmt.Errorf("strata: the partition directories of topic %q name %d topic ids (%v): remove those of the topics that were deleted: %w",
				name, len(ids), ids, ErrCorrupt)
		}
		if e.Config, err = e.Config.WithDefaults(); err != nil {
			return nil, err
		}
		rebuilt[name] = e
	}
	path := filepath.Join(dir, topicsFile)
	if err := fsys.Rename(path, path+".damaged"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("strata: keeping %s: %w", path, err)
	}
	if err := writeRegistry(fsys, dir, rebuilt); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(rebuilt))
	for name := range rebuilt {
		if !topic.IsInternal(name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// partitionDirs returns, for every topic name with partition directories
// ("<topic>-<partition>") in dir, the number of partitions its
// highest-numbered one says it has.
func partitionDirs(fsys vfs.FS, dir string) (map[string]int, error) {
	names, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("strata: listing %s: %w", dir, err)
	}
	return listedPartitionDirs(fsys, dir, names), nil
}

// listedPartitionDirs is partitionDirs of the names listed in dir.
func listedPartitionDirs(fsys vfs.FS, dir string, names []string) map[string]int {
	counts := map[string]int{}
	for _, name := range names {
		t, n, ok := topic.ParsePartitionDir(name)
		if !ok {
			continue // not a partition directory ("t-0.x-delete")
		}
		if fi, err := fsys.Stat(filepath.Join(dir, name)); err != nil || !fi.IsDir {
			continue
		}
		counts[t] = max(counts[t], n+1)
	}
	return counts
}
