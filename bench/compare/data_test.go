package main

import (
	"testing"
)

// TestCheck: check and checkAt accept every record as newData made it and
// refuse one whose key or value differs by one byte, or is another record.
func TestCheck(t *testing.T) {
	testCheck(t, (*data).check)
	testCheck(t, (*data).checkAt)
}

func testCheck(t *testing.T, check func(d *data, i int64, key, value []byte) bool) {
	d := newData(50)
	for i := range d.n {
		r := d.rec(i)
		if !check(d, int64(i), r.Key, r.Value) {
			t.Fatalf("record %d refused", i)
		}
	}
	r := d.rec(7)
	if check(d, 8, r.Key, r.Value) || check(d, -1, r.Key, r.Value) || check(d, 50, r.Key, r.Value) {
		t.Fatal("record 7 accepted as another")
	}
	for at := range recSize {
		b := append([]byte(nil), d.arena[7*recSize:8*recSize]...)
		b[at] ^= 1
		if check(d, 7, b[:keySize], b[keySize:]) {
			t.Fatalf("a flipped byte %d accepted", at)
		}
	}
	if check(d, 7, r.Key, r.Value[:valueSize-1]) || check(d, 7, r.Key[:keySize-1], r.Value) {
		t.Fatal("a short record accepted")
	}
}

// BenchmarkHarness is the harness's cost per record read: the noop log's
// Scan with check, and its Get (which makes the record again) with
// checkAt.
func BenchmarkHarness(b *testing.B) {
	const n = 100_000
	d := newData(n)
	l := &noopLog{d: d, n: n}
	b.Run("read=scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = l.Scan(0, func(i int64, key, value []byte) bool { return d.check(i, key, value) })
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/rec")
	})
	b.Run("read=get", func(b *testing.B) {
		b.ReportAllocs()
		i := int64(0)
		fn := func(key, value []byte) {
			if !d.checkAt(i, key, value) {
				b.Fatal("mismatch")
			}
		}
		for b.Loop() {
			i = (i + 7919) % n
			_ = l.Get(i, fn)
		}
	})
}
