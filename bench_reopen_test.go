package strata_test

import (
	"path/filepath"
	"testing"

	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/vfs"
)

// BenchmarkReopen reopens a store of 1 M records of 100 B (one partition,
// closed cleanly) once per op: Open alone (the Close after it untimed),
// Open and a point read of the last record (Get, Close untimed), the
// whole cycle with its Close, and the point read alone, first after Open
// and second; beside them, in the same run, the reopen of a store without
// topics (the store's own files alone) and partition.Open
// of the same partition alone, the floor under the store's own files.
// bench/ compares the reopen with bbolt's.
func BenchmarkReopen(b *testing.B) {
	dir, _ := benchFillStore(b)
	last := int64(benchRecords - 1)
	run := func(b *testing.B, get, closeTimed bool) {
		b.ReportAllocs()
		for range b.N {
			s := benchOpenStore(b, dir)
			if get {
				if r, err := s.Get(benchTopic, 0, last); err != nil || r.Offset != last {
					b.Fatal(r.Offset, err)
				}
			}
			if !closeTimed {
				b.StopTimer()
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.Run("api=store/op=open/records=1M", func(b *testing.B) { run(b, false, false) })
	b.Run("api=store/op=open+get/records=1M", func(b *testing.B) { run(b, true, false) })
	b.Run("api=store/op=open+get+close/records=1M", func(b *testing.B) { run(b, true, true) })
	// The point read alone: the first one after each Open (Open and Close
	// untimed), then a second one of the same record, warm.
	for _, second := range []bool{false, true} {
		name := "api=store/op=first-get/records=1M"
		if second {
			name = "api=store/op=second-get/records=1M"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 64<<10)
			for range b.N {
				b.StopTimer()
				s := benchOpenStore(b, dir)
				if second {
					if _, err := s.GetInto(benchTopic, 0, last, buf); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if r, err := s.GetInto(benchTopic, 0, last, buf); err != nil || r.Offset != last {
					b.Fatal(r.Offset, err)
				}
				b.StopTimer()
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
	b.Run("api=store/op=open/topics=0", func(b *testing.B) {
		// The store's own part of a reopen: lock, listing, marker and
		// registry, no partition.
		empty := b.TempDir()
		s := benchOpenStore(b, empty)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for range b.N {
			s := benchOpenStore(b, empty)
			b.StopTimer()
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
	b.Run("api=partition/op=open/records=1M", func(b *testing.B) {
		b.ReportAllocs()
		pdir := filepath.Join(dir, benchTopic+"-0")
		for range b.N {
			p, err := partition.Open(vfs.OS, pdir, benchPartitionConfig(), true)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := p.Close(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}
