package compaction

import (
	"bytes"
	"math"
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// Sizes of the offset map.
const (
	// DefaultBufferBytes is the default memory budget of an offset map
	// (Config.BufferBytes): 32 MiB. Kafka's log.cleaner.dedupe.buffer.size
	// is 128 MiB shared by its cleaner threads; an embedded log is usually
	// smaller, and the map grows into its budget only as keys arrive.
	DefaultBufferBytes = 32 << 20
	// MaxBufferBytes is the largest budget an offset map accepts (2 GiB):
	// key bytes are addressed with 32 bits.
	MaxBufferBytes = math.MaxInt32
	// LoadFactor is the fullest an offset map's slot table gets, as Kafka's
	// log.cleaner.io.buffer.load.factor (0.9).
	LoadFactor = 0.9
	// SlotBytes is what one slot of the table costs: the key's 64-bit hash,
	// its offset, and where its bytes lie in the key arena. Each key costs
	// its slot (over the load factor) plus its own bytes.
	SlotBytes = 24
)

// minSlots is the size of a new map's first slot table.
const minSlots = 64

// OffsetMap maps record keys to the offset of their latest record, in a
// bounded amount of memory. It is the cleaner's dedupe buffer (Kafka's
// SkimpyOffsetMap) with one difference: Kafka identifies a key by its MD5
// digest alone and accepts that two keys with the same digest make it drop
// the newer value of one of them; this map identifies a key by its bytes.
//
// # Layout
//
// An open-addressing table with linear probing, and an arena of key bytes:
//
//	slots []slot  24 bytes each, so a lookup mostly touches one cache line of
//	              the table (and one of the arena):
//	  hash        64-bit hash of the key (0 marks a free slot; a key
//	              hashing to 0 is stored as 1)
//	  offset      offset of the key's latest record
//	  ref         position << 32 | length of the key's bytes in arena
//	arena []byte  the keys' bytes, back to back
//
// Lookups compare the hash, then the key bytes, so two keys with the same
// hash take two slots and never shadow one another. The hash is xxhash64
// unless NewOffsetMap is given another (tests force collisions that way).
//
// # Memory
//
// The budget covers the slot table (SlotBytes a slot) and the key arena. The
// table starts small and doubles as keys arrive, up to the largest size whose
// slots, filled to LoadFactor with keys of the average length seen so far,
// fit the budget; the map is full when the table is at that size and
// LoadFactor full, or when the arena has no room for the next key. What
// counts against the budget (Bytes) is the table and the key bytes; the
// arena's spare capacity, and the old table while the table doubles, come
// on top, so the memory allocated may reach about 1.5 times the budget.
// Reset keeps the memory for the next round.
//
// An OffsetMap is not safe for concurrent use.
type OffsetMap struct {
	budget int
	hash   func([]byte) uint64
	slots  []slot
	arena  []byte
	count  int
}

// slot is one entry of the table; see OffsetMap.
type slot struct {
	hash   uint64
	offset int64
	ref    uint64
}

// NewOffsetMap returns an empty map that uses at most budgetBytes of memory
// (DefaultBufferBytes if zero or negative, at most MaxBufferBytes) and hashes
// keys with hash (xxhash64 if nil). A test may pass a hash with collisions;
// the map stays correct, only slower.
func NewOffsetMap(budgetBytes int, hash func([]byte) uint64) *OffsetMap {
	if budgetBytes <= 0 {
		budgetBytes = DefaultBufferBytes
	}
	budgetBytes = min(budgetBytes, MaxBufferBytes)
	if hash == nil {
		hash = xxhash.Sum64
	}
	return &OffsetMap{budget: budgetBytes, hash: hash}
}

// Put records offset as the offset of key's latest record, replacing the
// one recorded before. It reports false, and changes nothing, when key is
// new and the map has no room for it; a key already present is always
// updated. key may be empty (an empty key is a key); the map copies it.
func (m *OffsetMap) Put(key []byte, offset int64) bool {
	h := m.sum(key)
	i, found := m.find(h, key)
	if found {
		m.slots[i].offset = offset
		return true
	}
	ok, grown := m.room(len(key))
	if !ok {
		return false
	}
	if grown {
		i, _ = m.find(h, key) // the slot found is in the old table: probe again
	}
	pos := len(m.arena)
	if pos+len(key) > cap(m.arena) {
		// Grow the arena by doubling, but never past what the budget
		// leaves it (room checked that the key fits).
		c := min(max(2*cap(m.arena), pos+len(key), 4096), m.budget-len(m.slots)*SlotBytes)
		arena := make([]byte, pos, c)
		copy(arena, m.arena)
		m.arena = arena
	}
	m.arena = append(m.arena, key...)
	m.slots[i] = slot{hash: h, offset: offset, ref: uint64(pos)<<32 | uint64(len(key))}
	m.count++
	return true
}

// Get returns the offset recorded for key, and whether there is one.
func (m *OffsetMap) Get(key []byte) (int64, bool) {
	if m.count == 0 {
		return 0, false
	}
	i, found := m.find(m.sum(key), key)
	if !found {
		return 0, false
	}
	return m.slots[i].offset, true
}

// Len returns the number of keys in the map.
func (m *OffsetMap) Len() int { return m.count }

// Bytes returns the memory the map uses for its keys: the slot table and
// the key bytes, as counted against the budget.
func (m *OffsetMap) Bytes() int { return len(m.slots)*SlotBytes + len(m.arena) }

// Budget returns the map's memory budget in bytes.
func (m *OffsetMap) Budget() int { return m.budget }

// BytesPerKey returns Bytes divided by Len: the memory a key has cost, slot
// table and key bytes included (0 for an empty map).
func (m *OffsetMap) BytesPerKey() float64 {
	if m.count == 0 {
		return 0
	}
	return float64(m.Bytes()) / float64(m.count)
}

// reset empties the map and keeps its memory for the next round.
func (m *OffsetMap) reset() {
	clear(m.slots)
	m.arena = m.arena[:0]
	m.count = 0
}

// sum returns key's hash, never 0 (the mark of a free slot).
func (m *OffsetMap) sum(key []byte) uint64 {
	h := m.hash(key)
	if h == 0 {
		h = 1
	}
	return h
}

// home returns the first slot to probe for hash h in a table of n slots:
// the hash is mixed (so that a poor injected hash still spreads) and
// reduced to [0, n) by a multiplication rather than a division.
func home(h uint64, n int) int {
	hi, _ := bits.Mul64(h*0x9e3779b97f4a7c15, uint64(n))
	return int(hi)
}

// find returns the slot holding key (found) or the free slot where it
// would go. The table must not be full, which LoadFactor ensures.
func (m *OffsetMap) find(h uint64, key []byte) (slot int, found bool) {
	n := len(m.slots)
	if n == 0 {
		return -1, false
	}
	for i := home(h, n); ; i++ {
		if i == n {
			i = 0
		}
		switch s := &m.slots[i]; s.hash {
		case 0:
			return i, false
		case h:
			pos, l := s.ref>>32, s.ref&math.MaxUint32
			if bytes.Equal(m.arena[pos:pos+l], key) {
				return i, true
			}
		}
	}
}

// room makes room for one more key of keyLen bytes, growing the table if
// it must, and reports whether there is and whether the table grew.
func (m *OffsetMap) room(keyLen int) (ok, grown bool) {
	if m.Bytes()+keyLen > m.budget {
		return false, false
	}
	if m.count+1 <= int(LoadFactor*float64(len(m.slots))) {
		return true, false
	}
	// The table is as full as it may be: double it, but leave room for the
	// keys its slots will hold, going by the average key length so far.
	avg := float64(len(m.arena)+keyLen) / float64(m.count+1)
	limit := int(float64(m.budget) / (SlotBytes + LoadFactor*avg))
	n := min(max(2*len(m.slots), minSlots), limit)
	if m.count+1 > int(LoadFactor*float64(n)) || n*SlotBytes+len(m.arena)+keyLen > m.budget {
		return false, false
	}
	m.rehash(n)
	return true, true
}

// rehash moves the keys into a new table of n slots.
func (m *OffsetMap) rehash(n int) {
	old := m.slots
	m.slots = make([]slot, n)
	for _, s := range old {
		if s.hash == 0 {
			continue
		}
		i := home(s.hash, n)
		for m.slots[i].hash != 0 {
			if i++; i == n {
				i = 0
			}
		}
		m.slots[i] = s
	}
}
