package bench

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tidwall/wal"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/cputime"
)

// BenchmarkColdCycle is what a test on real files pays for a log of its
// own, per op in a new directory: open, create a topic (Strata), write one
// 100-byte record, read it back, close. Strata runs under SyncNever (no
// fsync at all); tidwall/wal with NoSync (its Close still fsyncs the
// segment file, as its cycle does). Beside them, floors: the same cycle
// made of plain os calls that create only the inodes of Kafka's layout
// (floor=dir+partition+log: the store's directory, the partition's and its
// .log; floor=+metadata adds partition.metadata; floor=+registry adds a
// topics.json written by temporary file and rename, the five a Strata
// store needs), so the ratios can be read against what the layout itself
// costs on this disk in the same run. Besides the wall-clock time it
// reports the process's CPU time per op (cpu-ns/op), steadier on a shared
// machine.
func BenchmarkColdCycle(b *testing.B) {
	value := make([]byte, 100)
	ctx := context.Background()
	b.Run("log=strata", func(b *testing.B) {
		b.ReportAllocs()
		root := b.TempDir()
		opts := &strata.Options{Sync: strata.SyncNever, Logger: slog.New(slog.DiscardHandler)}
		i := 0
		cpu0, ok0 := cputime.Process()
		for b.Loop() {
			i++
			s, err := strata.Open(filepath.Join(root, strconv.Itoa(i)), opts)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.CreateTopic("t", strata.TopicConfig{}); err != nil {
				b.Fatal(err)
			}
			if _, err := s.AppendTo(ctx, "t", 0, strata.Record{Value: value}); err != nil {
				b.Fatal(err)
			}
			if recs, err := s.Read(ctx, "t", 0, 0, 1); err != nil || len(recs) != 1 {
				b.Fatal(len(recs), err)
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu0, ok0)
	})
	b.Run("log=tidwall-wal", func(b *testing.B) {
		b.ReportAllocs()
		root := b.TempDir()
		i := 0
		cpu0, ok0 := cputime.Process()
		for b.Loop() {
			i++
			l, err := wal.Open(filepath.Join(root, strconv.Itoa(i)), &wal.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Write(1, value); err != nil {
				b.Fatal(err)
			}
			if got, err := l.Read(1); err != nil || len(got) != len(value) {
				b.Fatal(len(got), err)
			}
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu0, ok0)
	})
	for _, floor := range []struct {
		name               string
		metadata, registry bool
	}{
		{"dir+partition+log", false, false},
		{"+metadata", true, false},
		{"+registry", true, true},
	} {
		b.Run("log=os/floor="+floor.name, func(b *testing.B) {
			b.ReportAllocs()
			root := b.TempDir()
			i := 0
			cpu0, ok0 := cputime.Process()
			for b.Loop() {
				i++
				if err := floorCycle(filepath.Join(root, strconv.Itoa(i)), value, floor.metadata, floor.registry); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu0, ok0)
		})
	}
}

// floorCycle is a cold cycle of plain os calls in a new directory dir: it
// creates dir, a partition directory in it and the partition's .log
// (with partition.metadata and a topics.json written through a temporary
// file and a rename when asked), writes value to the .log, reads it back
// and closes; nothing is fsynced.
func floorCycle(dir string, value []byte, metadata, registry bool) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	pdir := filepath.Join(dir, "t-0")
	if err := os.Mkdir(pdir, 0o755); err != nil {
		return err
	}
	if registry {
		tmp := filepath.Join(dir, "topics.json.tmp")
		if err := os.WriteFile(tmp, []byte(`{"version":2,"topics":{"t":{}}}`), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(dir, "topics.json")); err != nil {
			return err
		}
	}
	if metadata {
		if err := os.WriteFile(filepath.Join(pdir, "partition.metadata"), []byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n"), 0o644); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(filepath.Join(pdir, "00000000000000000000.log"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(value); err != nil {
		f.Close()
		return err
	}
	got := make([]byte, len(value))
	if _, err := f.ReadAt(got, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
