package log

import "testing"

// TestUvarintShort checks the decoder's fast path against uvarintAt for
// every first and second byte, at the end of the input and before more
// bytes: where it decodes a varint it must be the one uvarintAt reads, for
// a varint and a varlong alike, and it must leave every other input
// (longer, padded, truncated) to uvarintAt.
func TestUvarintShort(t *testing.T) {
	for c0 := range 256 {
		for c1 := range 256 {
			for _, b := range [][]byte{{byte(c0)}, {byte(c0), byte(c1)}, {byte(c0), byte(c1), 0x01}} {
				u, q := uvarintShort(b, 0)
				wu, wq := uvarintAt(b, 0, maxVarintLen, maxVarintLast)
				lu, lq := uvarintAt(b, 0, maxVarlongLen, maxVarlongLast)
				short := wq > 0 && wq <= 2
				switch {
				case short && (q != wq || u != wu || lq != wq || lu != wu):
					t.Fatalf("% x: fast path %d, %d; uvarintAt %d, %d (varlong %d, %d)", b, u, q, wu, wq, lu, lq)
				case !short && q != 0:
					t.Fatalf("% x: fast path decoded %d, %d; uvarintAt %d, %d", b, u, q, wu, wq)
				}
			}
		}
	}
	if _, q := uvarintShort([]byte{0x05}, 1); q != 0 {
		t.Fatalf("past the end: position %d, want 0", q)
	}
}
