package segment

import (
	"testing"

	"github.com/stratalog/strata/internal/cputime"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// BenchmarkLookupAlike looks up random offsets of a segment of 5,000 alike
// batches of 100 records of 100 B (60 MB on the OS's file system, more than
// the caches hold), as a point read does: CursorAt, the batch's Next, and
// the record's start. path=alike finds the batch through the run of alike
// batches the appends left; path=index is the same segment with its run
// forgotten, so that the lookups search the offset index, as they do after
// a reopen: the baseline, in the same run. Both report the process's CPU
// time per lookup (cpu-ns/op) and check that each lookup lands in the
// batch that holds its offset.
func BenchmarkLookupAlike(b *testing.B) {
	const batches, records = 5_000, 100
	s, err := Create(vfs.OS, b.TempDir(), 0, Config{MaxBytes: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	one := encode(b, alikeRecords(0, records, 100))
	for i := range batches {
		log.SetBaseOffset(one, int64(i)*records)
		if err := s.Append(one); err != nil {
			b.Fatal(err)
		}
	}
	lookups := func(b *testing.B) {
		x := uint64(1)
		var h log.BatchHeader
		var c Cursor
		cpu0, cpuOK := cputime.Process()
		for b.Loop() {
			x = x*6364136223846793005 + 1442695040888963407
			off := int64(x>>33) % (batches * records)
			if err := s.CursorInto(&c, off); err != nil {
				b.Fatal(err)
			}
			batch, err := c.NextInto(&h)
			if err != nil || h.BaseOffset > off || h.LastOffset() < off {
				b.Fatalf("offset %d: batch [%d, %d], %v", off, h.BaseOffset, h.LastOffset(), err)
			}
			if at, _ := c.RecordStart(batch, &h, int(off-h.BaseOffset)); at < log.BatchHeaderSize {
				b.Fatalf("offset %d: record start %d", off, at)
			}
		}
		cpu1, _ := cputime.Process()
		if cpuOK {
			b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
		}
	}
	b.Run("path=alike", func(b *testing.B) {
		if _, ok := s.alike.lookup(0, s.Base(), s.Size()); !ok {
			b.Fatal("no run of alike batches")
		}
		lookups(b)
	})
	b.Run("path=index", func(b *testing.B) {
		s.alike.reset()
		lookups(b)
	})
}
