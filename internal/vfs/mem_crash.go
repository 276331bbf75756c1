package vfs

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"slices"
)

// Crash simulates a power cut. It returns a new Mem holding what was durable
// in m: the durable namespace (as of each directory's last SyncDir, and every
// directory MkdirAll created), each file with its durable contents (as of its
// last Sync or SyncMap). Every file of the new Mem is fully durable.
//
// From then on m is dead, as the process that used it would be: every call on
// m or on a file opened from it fails with [ErrCrashed] (Crash and
// CrashKeepingPrefix excepted: they may be called again to get another copy
// of the same state). Mappings of m's files stay readable memory but no longer
// reach any file. The new Mem keeps m's disk limit but has no injector and
// counts from zero.
//
// A directory reachable under two names in the durable namespace (which
// unsynced renames of directories can produce) keeps only the first in
// breadth-first, name order.
func (m *Mem) Crash() *Mem {
	return m.crash(nil)
}

// CrashKeepingPrefix is [Mem.Crash], except that a file whose current
// contents extend its durable contents (the same bytes, then an unsynced
// tail: a file only appended to since its last Sync) keeps a prefix of that
// tail, of a length drawn uniformly from rng between none and all of it. Such
// torn tails are what a recovery must truncate. Files are visited in a fixed
// order, so a seeded rng makes the outcome reproducible.
func (m *Mem) CrashKeepingPrefix(rng *rand.Rand) *Mem {
	return m.crash(rng)
}

func (m *Mem) crash(rng *rand.Rand) *Mem {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.crashed = true

	n := NewMem()
	n.mu.limit = m.mu.limit
	copied := map[*memNode]*memNode{m.mu.root: n.mu.root}
	type pair struct{ old, new *memNode }
	queue := []pair{{m.mu.root, n.mu.root}}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		for _, name := range slices.Sorted(maps.Keys(dir.old.durable)) {
			old := dir.old.durable[name]
			nd, seen := copied[old]
			switch {
			case seen && old.isDir:
				continue // a directory has one parent
			case !seen && old.isDir:
				nd = newDirNode()
				queue = append(queue, pair{old, nd})
			case !seen:
				data := survivingContents(old, rng)
				nd = &memNode{data: data, synced: bytes.Clone(data)}
				n.mu.used += int64(len(data))
			}
			copied[old] = nd
			dir.new.entries[name] = nd
			dir.new.durable[name] = nd
			if !nd.isDir {
				nd.links++
			}
		}
	}
	return n
}

// survivingContents returns a copy of what a power cut leaves of the file nd:
// its durable contents and, if rng is not nil and the current contents only
// append to them, a random prefix of the appended tail.
func survivingContents(nd *memNode, rng *rand.Rand) []byte {
	kept := nd.synced
	if rng != nil && len(nd.data) > len(nd.synced) && bytes.HasPrefix(nd.data, nd.synced) {
		tail := len(nd.data) - len(nd.synced)
		kept = nd.data[:len(nd.synced)+rng.IntN(tail+1)]
	}
	return bytes.Clone(kept)
}
