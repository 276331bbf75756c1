package index

import (
	"encoding/binary"
	"math"
)

// warmBytes is the size of an index's tail that a lookup searches first
// (Kafka's AbstractIndex: 8192 bytes, about two pages): 1024 offset entries,
// 682 time entries.
const warmBytes = 8192

// field locates a search key inside an entry. Every key lies within an
// 8-byte window of its entry: an int64 key is the whole window, an int32 key
// one half. The search compares raw windows, shifted so that the key is on
// top, with a bound made from the target once, which keeps the steps of a
// search short: load, swap, shift, compare.
type field struct {
	size   int  // entry size in bytes
	window int  // start of the 8-byte window within the entry
	lsh    uint // left shift that puts the key's top bit at bit 63
	rsh    uint // arithmetic right shift that brings the key back down
}

var (
	offsetKey   = field{size: OffsetEntrySize, window: 0, lsh: 0, rsh: 32}  // int32 relative offset, bytes 0-3
	offsetValue = field{size: OffsetEntrySize, window: 0, lsh: 32, rsh: 32} // int32 position, bytes 4-7
	timeKey     = field{size: TimeEntrySize, window: 0, lsh: 0, rsh: 0}     // int64 timestamp, bytes 0-7
	timeValue   = field{size: TimeEntrySize, window: 4, lsh: 32, rsh: 32}   // int32 relative offset, bytes 8-11
)

// raw returns the window at byte position pos (an entry's start plus
// f.window) with the key shifted to the top: key<<rsh plus, below it, bits
// of no meaning.
func (f field) raw(data []byte, pos int) int64 {
	return int64(binary.BigEndian.Uint64(data[pos:pos+8]) << (f.lsh & 63))
}

// get returns entry i's key, sign-extended to int64.
func (f field) get(data []byte, i int) int64 {
	return f.raw(data, i*f.size+f.window) >> (f.rsh & 63)
}

// bound returns the value b such that an entry's key is at most target
// exactly when its raw window is at most b, or false if no key is.
func (f field) bound(target int64) (int64, bool) {
	if f.rsh == 0 {
		return target, true
	}
	switch {
	case target < math.MinInt32:
		return 0, false
	case target > math.MaxInt32:
		return math.MaxInt64, true
	}
	return target<<32 | (1<<32 - 1), true
}

// floor returns the index of the last of the first n entries of data whose
// key is at most target, or -1 if there is none. The keys must be
// non-decreasing.
//
// Like Kafka's indexSlotRangeFor (largest lower bound) it is a binary
// search, but it first narrows the range to where target would lie if the
// keys rose evenly from the first entry to the last. An offset index's keys
// nearly do (offsets are dense and batches often alike), so the guess is
// usually a few entries off and the search that follows stays within a few
// cache lines, where a plain binary search takes a dependent load (often a
// cache miss) for each halving of a large index. The guess is checked, never
// trusted: a window around it is used only if its ends bracket target, and
// otherwise the side of it that does is searched, at the cost of four more
// loads than a plain binary search. Every lookup reads the first and last
// entries (two pages of the file, which stay in the page cache) and the
// entries around the guess; a plain binary search of a cold file would
// touch pages n/2, 3n/4… first. Where the guess misses and the narrowed
// range still reaches the warm tail (the last warmBytes of entries, where
// Kafka's search starts because most lookups are for recent offsets), the
// tail is searched when it holds the answer.
func floor(data []byte, n int, f field, target int64) int {
	b, ok := f.bound(target)
	if n == 0 || !ok || f.raw(data, f.window) > b {
		return -1
	}
	if f.raw(data, (n-1)*f.size+f.window) <= b {
		return n - 1
	}
	// From here on, entry lo's key is at most target and entry hi's is
	// above it.
	lo, hi := 0, n-1
	if hi-lo > 2*guessSlack {
		lo, hi = interpolate(data, f, target, lo, hi, b)
	}
	if hot := n - 1 - warmBytes/f.size; hot > lo && hot < hi && f.raw(data, hot*f.size+f.window) <= b {
		lo = hot
	}
	return search(data, lo, hi-1, f, b)
}

// guessSlack is how many entries each side of an interpolated guess floor
// checks the keys of: 16 offset entries are two cache lines.
const guessSlack = 16

// interpolate narrows [lo, hi], where entry lo's key is at most target (its
// raw window at most b) and entry hi's is above it, to the window of
// guessSlack entries each side of where target would lie if the keys rose
// evenly, or to the side of that window that holds the answer.
func interpolate(data []byte, f field, target int64, lo, hi int, b int64) (int, int) {
	first, last := f.get(data, lo), f.get(data, hi)
	if last <= first || target < first {
		return lo, hi // cannot happen with sorted keys; stay safe
	}
	// In floating point: keys of a time index can span more than int64.
	// Large keys close together can round to one float64 (0/0), and
	// rounding can put the guess a little outside [lo, hi]: a guess that is
	// not a number in range is no guess.
	span := float64(last) - float64(first)
	if !(span > 0) {
		return lo, hi
	}
	frac := (float64(target) - float64(first)) / span
	if !(frac >= 0 && frac <= 1) {
		return lo, hi
	}
	g := lo + int(frac*float64(hi-lo))
	wlo, whi := max(lo, g-guessSlack), min(hi, g+guessSlack)
	if f.raw(data, wlo*f.size+f.window) > b {
		return lo, wlo // the answer lies below the window
	}
	if f.raw(data, whi*f.size+f.window) <= b {
		return whi, hi // … or above it
	}
	return wlo, whi
}

// ceil returns the index of the first of the first n entries of data whose
// key is at least target, or n if there is none. The keys must be
// non-decreasing.
func ceil(data []byte, n int, f field, target int64) int {
	if target == math.MinInt64 {
		return 0
	}
	return floor(data, n, f, target-1) + 1
}

// search returns the last index in [lo, hi] whose raw window is at most b,
// given that entry lo's is. It halves the range without a data-dependent
// branch: the comparison becomes a mask (the compiler keeps an if as a
// branch here, since lo is carried from step to step), so random targets
// cost no mispredictions, and the steps' sizes, which do not depend on the
// data, are computed off the chain of loads.
func search(data []byte, lo, hi int, f field, b int64) int {
	pos := lo*f.size + f.window
	for n := hi - lo + 1; n > 1; {
		half := n >> 1
		step := half * f.size
		mask := -b2i(f.raw(data, pos+step) <= b)
		lo += half & mask
		pos += step & mask
		n -= half
	}
	return lo
}

// b2i returns 1 for true and 0 for false; the compiler makes it a SETcc.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
