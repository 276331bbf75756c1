package strata_test

import (
	"context"
	"testing"

	"github.com/stratalog/strata"
)

// BenchmarkReadOnlyRead reads a partition of 20,000 records from the start,
// 100 at a time, through the owner's store and through a ReadOnly one on
// the same directory: what following costs a reader (a pread of the next
// header per read).
func BenchmarkReadOnlyRead(b *testing.B) {
	dir := b.TempDir()
	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	if err := w.CreateTopic("t", strata.TopicConfig{SegmentBytes: 1 << 20}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	const n = 20000
	for i := 0; i < n; i += 100 {
		recs := make([]strata.Record, 100)
		for j := range recs {
			recs[j].Value = []byte(roValue(int64(i + j)))
		}
		if _, err := w.AppendTo(ctx, "t", 0, recs...); err != nil {
			b.Fatal(err)
		}
	}
	r, err := strata.Open(dir, &strata.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for _, c := range []struct {
		name string
		s    *strata.Store
	}{{"store=owner", w}, {"store=readonly", r}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for off := int64(0); off < n; {
					recs, err := c.s.Read(ctx, "t", 0, off, 100)
					if err != nil || len(recs) == 0 {
						b.Fatal(off, err)
					}
					off += int64(len(recs))
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
