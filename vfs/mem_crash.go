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

// CrashKeepingPrefix is [Mem.Crash], except that a file no shorter than at
// its last Sync keeps its unsynced writes up to a byte drawn uniformly
// from rng, counted from the first byte that differs from its durable
// contents: a file appended to keeps a prefix of its new tail, and a file
// written in place (through a mapping, or into zeros that Allocate reserved)
// keeps the new bytes before that point and the durable ones after it. Such
// torn tails are what a recovery must truncate. Files are visited in a fixed
// order, so a seeded rng makes the outcome reproducible.
func (m *Mem) CrashKeepingPrefix(rng *rand.Rand) *Mem {
	return m.crash(func(nd *memNode) []byte { return survivingContents(nd, rng) })
}

// CrashKeepingPages is [Mem.Crash], except that each 4 KiB page of a file's
// unsynced changes survives or not, drawn from rng page by page, and the
// file keeps its durable size or its current one, also drawn: a kernel
// writes dirty pages back in any order, so a power cut can keep a later
// page of an append and lose an earlier one. Recovery must still keep only
// a valid prefix. Files are visited in a fixed order, so a seeded rng makes
// the outcome reproducible.
func (m *Mem) CrashKeepingPages(rng *rand.Rand) *Mem {
	return m.crash(func(nd *memNode) []byte { return survivingPages(nd, rng) })
}

// crash is Crash with survive giving what a file keeps; nil keeps its
// durable contents.
func (m *Mem) crash(survive func(*memNode) []byte) *Mem {
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
				data := bytes.Clone(old.synced)
				if survive != nil {
					data = survive(old)
				}
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

// survivingPages returns what a power cut that writes back random pages
// leaves of the file nd (see CrashKeepingPages).
func survivingPages(nd *memNode, rng *rand.Rand) []byte {
	const page = 4096
	size := len(nd.synced)
	if rng.IntN(2) == 0 {
		size = len(nd.data)
	}
	kept := make([]byte, size)
	for p := 0; p < size; p += page {
		end := min(p+page, size)
		from := nd.synced
		if rng.IntN(2) == 0 {
			from = nd.data
		}
		if p < len(from) {
			copy(kept[p:end], from[p:min(end, len(from))])
		}
	}
	return kept
}

// survivingContents returns a copy of what a power cut leaves of the file nd:
// its durable contents and, if rng is not nil and the file is no shorter
// than at its last sync, the unsynced writes up to a random byte, in file
// order. Past that byte the durable contents stay (or the file ends, where
// it had grown). This tears an appended tail at any length, and a write into
// a file's existing bytes (through a mapping, or into zeros that Allocate
// reserved) at any byte of it.
func survivingContents(nd *memNode, rng *rand.Rand) []byte {
	if rng == nil || len(nd.data) < len(nd.synced) {
		return bytes.Clone(nd.synced)
	}
	first := 0 // the first byte the sync did not see
	for first < len(nd.synced) && nd.data[first] == nd.synced[first] {
		first++
	}
	if first == len(nd.data) {
		return bytes.Clone(nd.synced)
	}
	cut := first + rng.IntN(len(nd.data)-first+1)
	kept := bytes.Clone(nd.data[:cut])
	if cut < len(nd.synced) {
		kept = append(kept, nd.synced[cut:]...)
	}
	return kept
}
