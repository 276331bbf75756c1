package strata_test

import (
	"testing"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/cputime"
	"github.com/stratalog/strata/log"
)

// BenchmarkGet looks up pseudo-random offsets of 1 M records of 100 B (in
// batches of 100), one per op: Store.Get (the record copied into a buffer
// of its own), Store.GetInto (copied into a buffer the caller reuses),
// beside the partition package's lookups in the same run: a Reader's
// SetOffset and Next (the record decoded in place in the mapping, nothing
// copied) and Partition.ReadRecord (what GetInto calls), and what a point
// read took without Get. The store is filled once; every line looks up the
// same offsets. Each reports the process's CPU time per lookup (cpu-ns/op)
// beside the wall time.
func BenchmarkGet(b *testing.B) {
	dir, _ := benchFillStore(b)
	lookups := func(b *testing.B, get func(off int64) (int64, error)) {
		b.ReportAllocs()
		x := uint64(1)
		cpu0, cpuOK := cputime.Process()
		for b.Loop() {
			x = x*6364136223846793005 + 1442695040888963407
			off := int64(x>>1) % benchRecords
			if got, err := get(off); err != nil || got != off {
				b.Fatal(got, err)
			}
		}
		cpu1, _ := cputime.Process()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
		if cpuOK {
			b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
		}
	}
	b.Run("api=store/call=Get/records=1M", func(b *testing.B) {
		s := benchOpenStore(b, dir)
		defer s.Close()
		lookups(b, func(off int64) (int64, error) {
			r, err := s.Get(benchTopic, 0, off)
			return r.Offset, err
		})
	})
	b.Run("api=store/call=GetInto/records=1M", func(b *testing.B) {
		s := benchOpenStore(b, dir)
		defer s.Close()
		buf := make([]byte, 4096)
		lookups(b, func(off int64) (int64, error) {
			r, err := s.GetInto(benchTopic, 0, off, buf)
			return r.Offset, err
		})
	})
	// What a point read took before Get: a Read of one record (a chunk of
	// batches copied), and Records started at the offset and broken off.
	b.Run("api=store/call=Read-max=1/records=1M", func(b *testing.B) {
		s := benchOpenStore(b, dir)
		defer s.Close()
		lookups(b, func(off int64) (int64, error) {
			recs, err := s.Read(benchCtx, benchTopic, 0, off, 1)
			if err != nil || len(recs) == 0 {
				return -1, err
			}
			return recs[0].Offset, nil
		})
	})
	b.Run("api=store/call=Records-break/records=1M", func(b *testing.B) {
		s := benchOpenStore(b, dir)
		defer s.Close()
		lookups(b, func(off int64) (int64, error) {
			for r, err := range s.Records(benchCtx, benchTopic, 0, off) {
				return r.Offset, err
			}
			return -1, nil
		})
	})
	b.Run("api=partition/call=Reader/records=1M", func(b *testing.B) {
		p := benchOpenFilled(b, dir)
		defer p.Close()
		r := p.NewReader(0)
		defer r.Close()
		var rec log.Record
		lookups(b, func(off int64) (int64, error) {
			r.SetOffset(off)
			_, err := r.Next(&rec)
			return rec.Offset, err
		})
	})
	b.Run("api=partition/call=ReadRecord/records=1M", func(b *testing.B) {
		p := benchOpenFilled(b, dir)
		defer p.Close()
		buf := make([]byte, 4096)
		var rec strata.Record
		lookups(b, func(off int64) (int64, error) {
			_, err := p.ReadRecord(off, &rec, buf)
			return rec.Offset, err
		})
	})
}
