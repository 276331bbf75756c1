package log_test

import (
	"testing"

	"github.com/stratalog/strata/log"
)

// TestSkipRecord compares SkipRecord with RecordLength on every pair of
// first two prefix bytes, at two positions in buffers of several lengths:
// where SkipRecord answers, RecordLength reads the same record end; where
// RecordLength reads a prefix of one or two bytes that fits, SkipRecord
// answers too (so the fast path leaves only longer prefixes and failures);
// and no answer is ever a record that does not fit a valid length.
func TestSkipRecord(t *testing.T) {
	for _, size := range []int{1, 2, 3, 7, 70, 300, 20_000} {
		for _, p := range []int{0, 5} {
			if p >= size {
				continue
			}
			b := make([]byte, size)
			for c := range 256 {
				for d := range 256 {
					b[p] = byte(c)
					if p+1 < size {
						b[p+1] = byte(d)
					} else if d > 0 {
						continue
					}
					q := log.SkipRecord(b, p)
					n, length, err := log.RecordLength(b[p:])
					switch {
					case q > 0 && q <= size:
						if err != nil || p+n+length != q {
							t.Fatalf("size %d, at %d, % x: SkipRecord %d, RecordLength %d+%d, %v", size, p, b[p:min(p+2, size)], q, n, length, err)
						}
					case q > size:
						if err == nil {
							t.Fatalf("size %d, at %d, % x: SkipRecord %d past the end, RecordLength %d+%d", size, p, b[p:min(p+2, size)], q, n, length)
						}
					case q != -1:
						t.Fatalf("size %d, at %d, % x: SkipRecord %d", size, p, b[p:min(p+2, size)], q)
					case err == nil && n <= 2:
						t.Fatalf("size %d, at %d, % x: RecordLength %d+%d, SkipRecord none", size, p, b[p:min(p+2, size)], n, length)
					}
				}
			}
		}
	}
}
