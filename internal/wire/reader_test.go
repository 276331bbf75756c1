package wire

import "testing"

// A Reader reads big-endian fields and strings, and the first field that
// does not read makes it bad for good, every later read returning zero.
func TestReader(t *testing.T) {
	r := NewReader([]byte{0xff, 0, 1, 0, 2, 'h', 'i', 3, 'y', 'o', 0, 0, 0, 7})
	if v := r.Int8(); v != -1 {
		t.Fatalf("Int8 = %d, want -1", v)
	}
	if v := r.Int16(); v != 1 {
		t.Fatalf("Int16 = %d, want 1", v)
	}
	if s := r.Str(); s != "hi" {
		t.Fatalf("Str = %q, want hi", s)
	}
	if s := r.CompactStr(); s != "yo" {
		t.Fatalf("CompactStr = %q, want yo", s)
	}
	if v := r.Int32(); v != 7 || r.Bad() || r.Len() != 0 {
		t.Fatalf("Int32 = %d, bad %v, %d left; want 7, false, 0", v, r.Bad(), r.Len())
	}
	if v := r.Int64(); v != 0 || !r.Bad() {
		t.Fatalf("Int64 past the end = %d, bad %v; want 0, true", v, r.Bad())
	}
	r = NewReader([]byte{0xff, 0xff, 0, 0})
	if s := r.Str(); s != "" || !r.Bad() {
		t.Fatalf("Str of length -1 = %q, bad %v; want bad", s, r.Bad())
	}
	if v := r.Int16(); v != 0 {
		t.Fatalf("Int16 after a bad read = %d, want 0", v)
	}
	r = NewReader([]byte{0x80, 0x80, 0x80, 0x80, 0x08}) // 1<<31
	if v := r.Uvarint(); v != 0 || !r.Bad() {
		t.Fatalf("Uvarint of 1<<31 = %d, bad %v; want bad", v, r.Bad())
	}
	r = NewReader([]byte{2, 0, 1, 'a', 5, 0})
	var tags []int
	r.TaggedFields(func(tag int, b []byte) bool { tags = append(tags, tag); return tag == 0 })
	if !r.Bad() || len(tags) != 2 {
		t.Fatalf("TaggedFields: tags %v, bad %v; want 2 tags, the refused one bad", tags, r.Bad())
	}
}
