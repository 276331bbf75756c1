package peers

import (
	"encoding/binary"
	"errors"
)

// errBadEntry is an entry that does not hold a key and a value as
// appendKV writes them.
var errBadEntry = errors.New("peers: entry is not a length-prefixed key and a value")

// appendKV appends key and value to dst as one entry, for the peers that
// store a single byte string per index: the key's length as a uvarint, the
// key, then the value.
func appendKV(dst, key, value []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	return append(dst, value...)
}

// splitKV splits an entry appendKV wrote into its key and value, which
// alias b.
func splitKV(b []byte) (key, value []byte, err error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return nil, nil, errBadEntry
	}
	return b[w : w+int(n)], b[w+int(n):], nil
}

// indexKey is the 8-byte big-endian key of index i, for the key-value
// stores: their keys sort in the order the records were appended.
func indexKey(dst []byte, i int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(i))
}

// be64 is the index an indexKey holds.
func be64(k []byte) uint64 {
	return binary.BigEndian.Uint64(k)
}
