package main

import (
	"github.com/stratalog/strata/bench/peers"
)

// noopLog stores nothing: its Scan gives back the arena's records, in
// order, and its Get makes the record again into one small buffer (so that
// a random read misses no cache). Run through the workloads, it measures
// what the harness itself costs per record (the loop, the slicing, the
// checks of every read), plus that remaking, so an upper bound.
type noopLog struct {
	d   *data
	n   int64
	buf [recSize]byte
}

var noopPeer = peers.Peer{
	Name:     "noop",
	InMemory: true,
	Note:     "the harness alone: Append counts, reads make the records again",
}

func (l *noopLog) Append(recs []peers.Rec) error {
	l.n += int64(len(recs))
	return nil
}

func (l *noopLog) Scan(from int64, fn func(i int64, key, value []byte) bool) error {
	for i := from; i < l.n; i++ {
		r := l.d.rec(int(i))
		if !fn(i, r.Key, r.Value) {
			break
		}
	}
	return nil
}

func (l *noopLog) Get(i int64, fn func(key, value []byte)) error {
	fill(l.buf[:], uint64(i))
	fn(l.buf[:keySize], l.buf[keySize:])
	return nil
}

func (l *noopLog) Close() error { return nil }
