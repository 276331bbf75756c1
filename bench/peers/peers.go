// Package peers puts Strata and the logs a Go program might embed instead
// behind one small interface, Log, so that the comparison program
// (bench/compare) runs the same workloads on each of them, checked the same
// way.
//
// Each peer lives in a file of its own and registers itself with register
// from an init function; All lists them in name order.
package peers

import (
	"slices"
	"strings"
)

// Rec is one record of a workload. A peer without keys (a plain log)
// stores Key and Value together and must give both back.
type Rec struct {
	Key, Value []byte
}

// Options say how a log is opened.
type Options struct {
	// Durable asks that each Append be on stable storage when it returns
	// (an fsync, or the peer's own equivalent); otherwise the peer runs
	// without syncing, in its fastest mode that still writes to its files.
	Durable bool
}

// Log is one peer's log, opened in a directory. Records are numbered from 0
// in the order they were appended.
type Log interface {
	// Append writes recs with one call of the peer's API: one batch where
	// the peer has batches, one transaction where it has transactions.
	Append(recs []Rec) error
	// Scan calls fn with each record from index from to the last one
	// appended before the call, in order, and stops early when fn returns
	// false. The slices are valid only during the call to fn.
	Scan(from int64, fn func(i int64, key, value []byte) bool) error
	// Get calls fn with record i. The slices are valid only during the
	// call to fn.
	Get(i int64, fn func(key, value []byte)) error
	// Close releases the log; under Durable it leaves everything on
	// stable storage.
	Close() error
}

// Flusher is a Log whose Append may return before the records are written
// (a producer that lingers). The workloads call Flush before they stop the
// clock and before they read.
type Flusher interface {
	Flush() error
}

// Peer is a named way to open a Log.
type Peer struct {
	// Name is short and stable, e.g. "strata", "tidwall-wal", "bbolt".
	Name string
	// Open opens the log in dir, creating it when dir is empty or missing,
	// and reopening what the same peer wrote there before.
	Open func(dir string, o Options) (Log, error)
	// InMemory is true for a peer that keeps nothing on disk (kfake):
	// reopening and bytes on disk do not apply to it.
	InMemory bool
	// Note says in a few words how the peer is used (the API and mode),
	// for the table's legend.
	Note string
	// Baseline is true for a pseudo-peer that measures the machine (raw
	// file writes) rather than a log a program would embed: it is shown
	// beside the others but never counted as the best peer.
	Baseline bool
	// Only names the one workload a baseline is measured on, as the
	// comparison's -workloads flag spells it ("w3", "w4" or "w6"), or is
	// empty. Such a baseline runs what comes before that workload on the
	// same log as every peer does (W2, then W4 and W5, before W6), so that
	// it runs after the same work as the others, and only that
	// workload's figure is shown.
	Only string
}

var registered []Peer

// register adds p to All; each peer's file calls it from init.
func register(p Peer) {
	registered = append(registered, p)
}

// All returns every registered peer, sorted by name.
func All() []Peer {
	all := slices.Clone(registered)
	slices.SortFunc(all, func(a, b Peer) int { return strings.Compare(a.Name, b.Name) })
	return all
}
