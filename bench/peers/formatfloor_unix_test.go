//go:build unix

package peers

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stratalog/strata/log"
)

// floorBatch encodes the records [base, base+n) of floorRec as one batch.
func floorBatch(t *testing.T, base int64, n int, c log.Compression) []byte {
	t.Helper()
	recs := make([]log.Record, n)
	for i := range recs {
		k, v := floorRec(base + int64(i))
		recs[i] = log.Record{Key: k, Value: v}
	}
	b, err := log.EncodeBatch(nil, recs, log.BatchOptions{BaseOffset: base, Now: 1, Compression: c})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// floorRec is record i: a key, and a value that compresses well; odd
// records have a null key.
func floorRec(i int64) (key, value []byte) {
	if i%2 == 0 {
		key = fmt.Appendf(nil, "key-%d", i)
	}
	return key, bytes.Repeat([]byte{byte(i)}, 200)
}

// floorScan walks m from from and returns the offsets it was handed, each
// record checked against floorRec.
func floorScan(t *testing.T, m []byte, from int64) ([]int64, error) {
	t.Helper()
	var got []int64
	_, err := floorWalk(m, from, func(i int64, key, value []byte) bool {
		k, v := floorRec(i)
		if !bytes.Equal(key, k) || (key == nil) != (k == nil) || !bytes.Equal(value, v) {
			t.Errorf("record %d: key %q, %d-byte value", i, key, len(value))
		}
		got = append(got, i)
		return true
	})
	return got, err
}

// TestFormatFloorWalk: the walk hands over every record of the batches from
// the offset asked for, steps over a transaction marker, stops at zeros,
// and refuses a compressed batch and lengths that reach out of their
// record or batch.
func TestFormatFloorWalk(t *testing.T) {
	marker, err := log.EncodeControlBatch(nil, log.ControlCommit, log.MarkerOptions{BaseOffset: 5, Now: 1, ProducerID: 7})
	if err != nil {
		t.Fatal(err)
	}
	var m []byte
	m = append(m, floorBatch(t, 0, 5, log.None)...)
	m = append(m, marker...)
	m = append(m, floorBatch(t, 6, 4, log.None)...)
	good := len(m)
	m = append(m, make([]byte, 300)...) // zeros written ahead

	for _, from := range []int64{0, 3, 6, 8, 10} {
		got, err := floorScan(t, m, from)
		var want []int64
		for i := from; i < 10; i++ {
			if i != 5 {
				want = append(want, i)
			}
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("from %d: %v, %v; want %v", from, got, err, want)
		}
	}
	stops := 0
	if more, err := floorWalk(m, 0, func(int64, []byte, []byte) bool { stops++; return stops < 2 }); more || err != nil || stops != 2 {
		t.Errorf("fn asking to stop at the second record: more %v, %v, %d calls", more, err, stops)
	}

	damage := map[string][]byte{
		"compressed": floorBatch(t, 0, 5, log.Gzip),
		// the batch length reaches past the bytes
		"batch cut": m[:good-1],
	}
	// The first record's key length (the varint after its 2-byte length,
	// attributes, timestamp delta and offset delta) says 127 bytes, past
	// its record.
	long := bytes.Clone(m[:good])
	at := log.BatchHeaderSize + 2 + 3
	if long[at] != 2*5 {
		t.Fatalf("the byte at %d is %d, not the key length of 5", at, long[at])
	}
	long[at] = 0xfe
	damage["key past its record"] = long
	for name, b := range damage {
		_, err := floorScan(t, b, 0)
		if !errors.Is(err, errFloorBatch) {
			t.Errorf("%s: %v, want errFloorBatch", name, err)
		}
		if compressed := strings.Contains(fmt.Sprint(err), "compressed"); compressed != (name == "compressed") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
