package peers

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stratalog/strata/log"
)

// batchesOf encodes one record batch per element of sizes, at consecutive
// offsets from 0, with values that say their offset; compressed batches
// are LZ4.
func batchesOf(t *testing.T, compressed bool, sizes ...int) []byte {
	t.Helper()
	var out []byte
	off := 0
	for _, n := range sizes {
		recs := make([]log.Record, n)
		for i := range recs {
			recs[i] = log.Record{Key: netRec(off + i).Key, Value: netRec(off + i).Value}
		}
		opts := log.BatchOptions{BaseOffset: int64(off), Now: 1}
		if compressed {
			opts.Compression = log.LZ4
		}
		var err error
		if out, err = log.EncodeBatch(out, recs, opts); err != nil {
			t.Fatal(err)
		}
		off += n
	}
	return out
}

func TestFindRecord(t *testing.T) {
	batches := batchesOf(t, false, 3, 1, 100)
	for off := range int64(104) {
		key, value, err := findRecord(batches, off)
		want := netRec(int(off))
		if err != nil || !bytes.Equal(key, want.Key) || !bytes.Equal(value, want.Value) {
			t.Fatalf("offset %d: %q=%q, %v; want %q=%q", off, key, value, err, want.Key, want.Value)
		}
	}
	// A partial batch at the end, as a fetch may send, is not read.
	if _, _, err := findRecord(batches[:len(batches)-1], 103); !errors.Is(err, errKgo) {
		t.Fatalf("offset 103 in a cut batch: %v, want errKgo", err)
	}
	if _, _, err := findRecord(batches, 104); !errors.Is(err, errKgo) {
		t.Fatalf("offset 104 past the batches: %v, want errKgo", err)
	}
	bad := bytes.Clone(batches)
	bad[len(bad)-1] ^= 1
	if _, _, err := findRecord(bad, 50); !errors.Is(err, errKgo) {
		t.Fatalf("a batch whose CRC fails: %v, want errKgo", err)
	}
	if _, _, err := findRecord(bad, 1); err != nil {
		t.Fatalf("offset 1 in a good batch before a bad one: %v", err)
	}
	compressed := batchesOf(t, true, 100)
	if _, _, err := findRecord(compressed, 1); !errors.Is(err, errKgoCompressed) {
		t.Fatalf("a compressed batch: %v, want errKgoCompressed", err)
	}
}
