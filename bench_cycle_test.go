package strata_test

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/stratatest"
	"github.com/stratalog/strata/vfs"
)

// BenchmarkStratatestRoundTrip is what a test pays for a store of its own:
// per op, a store in a new directory (stratatest.Open: in memory;
// stratatest.OpenOnDisk: in a new directory of b.TempDir(), SyncNever),
// CreateTopic, one Append, one Read of it and Close. Beside it, in the same
// run, the same cycle on a partition (partition.Open of a new directory,
// Append, ReadBatches, Close) and on a Go map (make, one store, one load),
// the floor a test double would cost. bench/ compares the on-disk cycle
// with tidwall/wal's.
func BenchmarkStratatestRoundTrip(b *testing.B) {
	rec := benchRecs(1)
	opts := &strata.Options{Logger: benchQuiet}
	storeCycle := func(b *testing.B, open func(testing.TB, *strata.Options) *strata.Store) {
		b.ReportAllocs()
		for b.Loop() {
			s := open(b, opts)
			if err := s.CreateTopic(benchTopic, strata.TopicConfig{}); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Append(benchCtx, benchTopic, rec...); err != nil {
				b.Fatal(err)
			}
			if recs, err := s.Read(benchCtx, benchTopic, 0, 0, 1); err != nil || len(recs) != 1 {
				b.Fatal(len(recs), err)
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	partitionCycle := func(b *testing.B, fsys vfs.FS, root string) {
		b.ReportAllocs()
		buf := make([]byte, 0, 4096)
		i := 0
		for b.Loop() {
			i++
			p, err := partition.Open(fsys, filepath.Join(root, strconv.Itoa(i)), benchPartitionConfig(), true)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.Append(rec); err != nil {
				b.Fatal(err)
			}
			if buf, err = p.ReadBatches(buf[:0], 0, 4096); err != nil || len(buf) == 0 {
				b.Fatal(len(buf), err)
			}
			if err := p.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("fs=mem/api=store", func(b *testing.B) { storeCycle(b, stratatest.Open) })
	b.Run("fs=mem/api=partition", func(b *testing.B) { partitionCycle(b, vfs.NewMem(), "/") })
	b.Run("fs=mem/api=map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := make(map[string][][]byte)
			m[benchTopic] = append(m[benchTopic], append([]byte(nil), rec[0].Value...))
			if got := m[benchTopic]; len(got) != 1 || len(got[0]) != len(rec[0].Value) {
				b.Fatal(len(got))
			}
		}
	})
	b.Run("fs=os/api=store", func(b *testing.B) { storeCycle(b, stratatest.OpenOnDisk) })
	b.Run("fs=os/api=partition", func(b *testing.B) { partitionCycle(b, vfs.OS, b.TempDir()) })
}
