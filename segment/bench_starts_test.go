package segment

import (
	"testing"

	"github.com/stratalog/strata/internal/cputime"
)

// BenchmarkRecordStarts learns the record positions of batches of 100
// records of 100 B picked at random among 10,000 (126 MB, far more than the
// caches hold), as a point read does the first time it lands in a batch,
// and reports the process's CPU time per batch (cpu-ns/op).
func BenchmarkRecordStarts(b *testing.B) {
	one := encode(b, makeRecords(0, 100, 100, 1))
	const batches = 10_000
	data := make([]byte, 0, len(one)*batches)
	for range batches {
		data = append(data, one...)
	}
	x := uint64(1)
	cpu0, cpuOK := cputime.Process()
	for b.Loop() {
		x = x*6364136223846793005 + 1442695040888963407
		pos := int(x>>33) % batches * len(one)
		if recordStarts(int64(pos), data[pos:pos+len(one)], 100) == nil {
			b.Fatal("the batch's records do not add up")
		}
	}
	cpu1, _ := cputime.Process()
	if cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}
