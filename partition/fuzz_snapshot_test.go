package partition

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/stratalog/strata/log"
)

// FuzzDecodeSnapshot feeds decodeSnapshot arbitrary snapshot files, and
// the same entries behind a header whose count and CRC are right, so that
// the entries themselves are read: it never panics, fails only with
// ErrCorruptSnapshot, and what it accepts encodes to a snapshot that
// decodes to the same state.
func FuzzDecodeSnapshot(f *testing.F) {
	ps := producerState{entries: map[int64]*producerEntry{}}
	for id := int64(0); id < 3; id++ {
		e := newProducerEntry(id)
		e.setEpoch(int16(id))
		for i := range int64(6) {
			e.addBatch(producerBatchMeta{firstSeq: int32(i * 2), lastSeq: int32(i*2 + 1), firstOffset: 10*id + 2*i, lastOffset: 10*id + 2*i + 1, timestamp: 1000 + i})
		}
		e.lastTimestamp = 2000
		ps.entries[id] = e
	}
	ps.entries[1].txnFirst = 11
	f.Add(encodeSnapshot(&ps))
	f.Add(encodeSnapshot(&producerState{entries: map[int64]*producerEntry{}}))
	f.Add([]byte{0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkSnapshotDecode(t, b)
		if len(b) > snapshotHeaderSize {
			body := b[snapshotHeaderSize:]
			body = body[:len(body)/snapshotEntrySize*snapshotEntrySize]
			fixed := make([]byte, snapshotHeaderSize, snapshotHeaderSize+len(body))
			binary.BigEndian.PutUint16(fixed, snapshotVersion)
			binary.BigEndian.PutUint32(fixed[snapshotEntriesFrom:], uint32(len(body)/snapshotEntrySize))
			fixed = append(fixed, body...)
			binary.BigEndian.PutUint32(fixed[2:], crc32.Checksum(fixed[snapshotEntriesFrom:], castagnoli))
			checkSnapshotDecode(t, fixed)
		}
	})
}

func checkSnapshotDecode(t *testing.T, b []byte) {
	t.Helper()
	ps, err := decodeSnapshot(b)
	if err != nil {
		if !errors.Is(err, ErrCorruptSnapshot) || !errors.Is(err, log.ErrCorrupt) {
			t.Fatalf("decodeSnapshot: %v, want ErrCorruptSnapshot", err)
		}
		return
	}
	again := encodeSnapshot(&ps)
	ps2, err := decodeSnapshot(again)
	if err != nil {
		t.Fatalf("a decoded snapshot encodes to one that fails: %v", err)
	}
	if third := encodeSnapshot(&ps2); !bytes.Equal(third, again) {
		t.Fatalf("a snapshot does not round-trip:\n%x\n%x", again, third)
	}
}
