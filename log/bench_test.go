package log_test

import (
	"fmt"
	"testing"

	"github.com/stratalog/strata/log"
)

// benchCases are the batches the benchmarks run over.
var benchCases = []struct{ records, size int }{{100, 100}}

func benchName(records, size int) string {
	return fmt.Sprintf("records=%d/size=%dB", records, size)
}

// reportRecords reports the throughput in records per second.
func reportRecords(b *testing.B, records int) {
	b.ReportMetric(float64(b.N*records)/b.Elapsed().Seconds(), "records/s")
}

func benchBatch(b *testing.B, records, size int) ([]log.Record, []byte) {
	recs := someRecords(records, size)
	batch, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1})
	if err != nil {
		b.Fatal(err)
	}
	return recs, batch
}

func BenchmarkEncode(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(benchName(bc.records, bc.size), func(b *testing.B) {
			recs, batch := benchBatch(b, bc.records, bc.size)
			buf := make([]byte, 0, len(batch))
			opts := log.BatchOptions{Now: 1}
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = log.EncodeBatch(buf[:0], recs, opts)
			}
			reportRecords(b, bc.records)
		})
	}
}

func BenchmarkIterate(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(benchName(bc.records, bc.size), func(b *testing.B) {
			_, batch := benchBatch(b, bc.records, bc.size)
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			var r log.Record
			for b.Loop() {
				it, err := log.NewRecordIter(batch)
				if err != nil {
					b.Fatal(err)
				}
				for it.Next(&r) {
				}
				if it.Err() != nil {
					b.Fatal(it.Err())
				}
			}
			reportRecords(b, bc.records)
		})
	}
}

// BenchmarkBaselineCopy copies the batch bytes: the floor Encode and
// Iterate compare with.
func BenchmarkBaselineCopy(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(benchName(bc.records, bc.size), func(b *testing.B) {
			_, batch := benchBatch(b, bc.records, bc.size)
			buf := make([]byte, 0, len(batch))
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				buf = append(buf[:0], batch...)
			}
			reportRecords(b, bc.records)
		})
	}
}

func BenchmarkCheckBatch(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(benchName(bc.records, bc.size), func(b *testing.B) {
			_, batch := benchBatch(b, bc.records, bc.size)
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := log.CheckBatch(batch); err != nil {
					b.Fatal(err)
				}
			}
			reportRecords(b, bc.records)
		})
	}
}

func BenchmarkValidate(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(benchName(bc.records, bc.size), func(b *testing.B) {
			_, batch := benchBatch(b, bc.records, bc.size)
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := log.Validate(batch); err != nil {
					b.Fatal(err)
				}
			}
			reportRecords(b, bc.records)
		})
	}
}
