package main

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/stratalog/strata/bench/peers"
)

const (
	keySize   = 16
	valueSize = 100
	recSize   = keySize + valueSize
)

// data is every record of a workload, generated once into one arena
// before anything is timed. The arena holds no pointers, so the garbage
// collector never scans it: a peer that allocates pays for its own
// garbage, not for a heap of the harness's (a slice of a million Recs
// would be two million pointers to scan at every cycle). Record i is a function of i alone: its key is
// i (8 bytes, big-endian) then a hash of i, its value 100 bytes of a
// generator seeded with i, so no two records are alike and nothing
// compresses.
type data struct {
	arena []byte
	n     int
}

func newData(n int) *data {
	d := &data{arena: make([]byte, n*recSize), n: n}
	for i := range n {
		fill(d.arena[i*recSize:(i+1)*recSize], uint64(i))
	}
	return d
}

// rec is record i, aliasing the arena.
func (d *data) rec(i int) peers.Rec {
	b := d.arena[i*recSize : (i+1)*recSize : (i+1)*recSize]
	return peers.Rec{Key: b[:keySize:keySize], Value: b[keySize:]}
}

// recs sets dst to records [i, j) and returns it.
func (d *data) recs(dst []peers.Rec, i, j int) []peers.Rec {
	dst = dst[:0]
	for k := i; k < j; k++ {
		dst = append(dst, d.rec(k))
	}
	return dst
}

// fill writes record i's bytes into b: i, big-endian, then words
// h(i) + k·φ for k = 1, 2, ... (little-endian, the last one cut short),
// where h is SplitMix64's mix of i and φ the golden-ratio constant: no two
// records and no two words of one record are alike, and checking a record
// costs one mix and an addition per word.
func fill(b []byte, i uint64) {
	binary.BigEndian.PutUint64(b, i)
	h := i
	h = splitmix(&h)
	at := 8
	for ; at+8 <= len(b); at += 8 {
		h += golden
		binary.LittleEndian.PutUint64(b[at:], h)
	}
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], h+golden)
	copy(b[at:], w[:])
}

const golden = 0x9E3779B97F4A7C15

// splitmix is SplitMix64's step.
func splitmix(s *uint64) uint64 {
	*s += golden
	z := *s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// check reports whether key and value are record i's, comparing them
// with the arena (a few ns when the arena's record is in the cache, as it
// is for a sequential scan, which the hardware prefetches); it allocates
// nothing. Random reads use checkAt instead.
func (d *data) check(i int64, key, value []byte) bool {
	if i < 0 || i >= int64(d.n) {
		return false
	}
	r := d.rec(int(i))
	return bytes.Equal(key, r.Key) && bytes.Equal(value, r.Value)
}

// checkAt is check that computes the record again instead of reading the
// arena, so that a check costs the same whatever the cache holds (a random
// read of the arena would miss it as often as the peer's own read does).
func (d *data) checkAt(i int64, key, value []byte) bool {
	if i < 0 || i >= int64(d.n) || len(key) != keySize || len(value) != valueSize {
		return false
	}
	if binary.BigEndian.Uint64(key) != uint64(i) {
		return false
	}
	h := uint64(i)
	h = splitmix(&h) + golden
	if binary.LittleEndian.Uint64(key[8:]) != h {
		return false
	}
	at := 0
	for ; at+8 <= len(value); at += 8 {
		h += golden
		if binary.LittleEndian.Uint64(value[at:]) != h {
			return false
		}
	}
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], h+golden)
	return bytes.Equal(value[at:], w[:len(value)-at])
}

// mismatch describes a record that is not record i, for the error that
// stops the program.
func (d *data) mismatch(what string, i int64, key, value []byte) error {
	if i < 0 || i >= int64(d.n) {
		return fmt.Errorf("%s: record index %d is outside the %d records written", what, i, d.n)
	}
	r := d.rec(int(i))
	return fmt.Errorf("%s: record %d differs from what was written: key %x (%d bytes), want %x; value of %d bytes, want %d (equal: %v)",
		what, i, key, len(key), r.Key, len(value), len(r.Value), bytes.Equal(value, r.Value))
}
