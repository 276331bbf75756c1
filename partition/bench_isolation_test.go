package partition

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// BenchmarkReadIsolation reads a partition of 200 k records of 100 B in
// batches of 10 from start to end, with a ReadUncommitted and a
// ReadCommitted Reader: data=plain holds no transaction (the cost of
// ReadCommitted there is its bound, the last stable offset, looked up per
// batch); data=txn-aborted=10% holds one transaction per batch, each ended
// by a marker, every tenth aborted (ReadCommitted then skips 10% of the
// records, looking the aborted transactions up as it goes).
func BenchmarkReadIsolation(b *testing.B) {
	const batches, perBatch = 20_000, 10
	recs := benchRecords(perBatch)
	plain, _ := memPartition(b, benchConfig(SyncNever))
	defer plain.Close()
	txn, _ := memPartition(b, benchConfig(SyncNever))
	defer txn.Close()
	for i := range batches {
		_, err := plain.Append(recs)
		require.NoError(b, err)
		_, _, err = txn.AppendProduced(recs, ProducerBatch{ID: 1, Seq: int32(i * perBatch), Transactional: true}, log.None, 0)
		require.NoError(b, err)
		_, err = txn.WriteMarker(1, 0, i%10 != 0, 0)
		require.NoError(b, err)
	}
	for _, c := range []struct {
		name string
		p    *Partition
		want map[Isolation]int
	}{
		{"plain", plain, map[Isolation]int{ReadUncommitted: batches * perBatch, ReadCommitted: batches * perBatch}},
		{"txn-aborted=10%", txn, map[Isolation]int{ReadUncommitted: batches * perBatch, ReadCommitted: batches * perBatch * 9 / 10}},
	} {
		for _, iso := range []Isolation{ReadUncommitted, ReadCommitted} {
			b.Run(fmt.Sprintf("data=%s/iso=%s", c.name, iso), func(b *testing.B) {
				b.ReportAllocs()
				var rec log.Record
				for b.Loop() {
					r := c.p.NewReaderIsolation(0, iso)
					n := 0
					for {
						ok, err := r.Next(&rec)
						if err != nil {
							b.Fatal(err)
						}
						if !ok {
							break
						}
						n++
					}
					r.Close()
					if n != c.want[iso] {
						b.Fatalf("read %d records, want %d", n, c.want[iso])
					}
				}
				b.ReportMetric(float64(b.N*batches*perBatch)/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
}
