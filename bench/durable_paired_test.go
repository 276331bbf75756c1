package bench

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidwall/wal"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// durableLog is one way of appending a 100-record batch durably, for
// BenchmarkDurablePaired.
type durableLog struct {
	name   string
	append func() error
	close  func() error
}

// BenchmarkDurablePaired is BenchmarkDurableAppend with its logs taking
// turns: each op appends one batch to every log, in an order that rotates,
// and each log's time is its own appends' only. A disk shared with other
// work slows the logs alike, so the ratios it reports hold on a busy
// machine, where the figures of separate benchmarks do not. It reports
// records/s per log (<log>-rec/s) and the ratios the goals are stated in:
// the store against tidwall/wal and against the raw baselines, and a
// segment written with zeros ahead (segment.Config.ZeroFill, what the
// partition does under SyncAlways) against one that grows with each
// append, both synced with SyncLog, and the raw ways of making a write
// durable against one another (see rawPairedLogs).
func BenchmarkDurablePaired(b *testing.B) {
	recs := durableRecords()
	batch := durableBatch(b)
	dir := b.TempDir()
	quiet := slog.New(slog.DiscardHandler)
	var logs []durableLog

	s, err := strata.Open(filepath.Join(dir, "store"), &strata.Options{Sync: strata.SyncAlways, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.CreateTopic("t", strata.TopicConfig{SegmentBytes: 256 << 20}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	logs = append(logs, durableLog{"store", func() error {
		_, err := s.AppendTo(ctx, "t", 0, recs...)
		return err
	}, s.Close})

	p, err := partition.Open(vfs.OS, filepath.Join(dir, "partition"), partition.Config{
		Sync: partition.SyncAlways, SegmentBytes: 256 << 20, Logger: quiet,
	}, false)
	if err != nil {
		b.Fatal(err)
	}
	logs = append(logs, durableLog{"partition", func() error {
		_, err := p.Append(recs)
		return err
	}, p.Close})

	for _, zero := range []bool{false, true} {
		name := "segment-grow"
		if zero {
			name = "segment-zerofill"
		}
		segDir := filepath.Join(dir, name)
		if err := os.Mkdir(segDir, 0o755); err != nil {
			b.Fatal(err)
		}
		seg, err := segment.Create(vfs.OS, segDir, 0, segment.Config{MaxBytes: 256 << 20, ZeroFill: zero})
		if err != nil {
			b.Fatal(err)
		}
		own := append([]byte(nil), batch...)
		logs = append(logs, durableLog{name, func() error {
			log.SetBaseOffset(own, seg.NextOffset())
			if err := seg.Append(own); err != nil {
				return err
			}
			return seg.SyncLog()
		}, seg.Close})
	}

	l, err := wal.Open(filepath.Join(dir, "wal"), &wal.Options{NoSync: false})
	if err != nil {
		b.Fatal(err)
	}
	entries := make([][]byte, len(recs))
	for i, r := range recs {
		entries[i] = append(append([]byte(nil), r.Key...), r.Value...)
	}
	var wb wal.Batch
	next := uint64(1)
	logs = append(logs, durableLog{"tidwall-wal", func() error {
		wb.Clear()
		for _, e := range entries {
			wb.Write(next, e)
			next++
		}
		return l.WriteBatch(&wb)
	}, l.Close})

	raw, err := os.Create(filepath.Join(dir, "raw-grow"))
	if err != nil {
		b.Fatal(err)
	}
	logs = append(logs, durableLog{"raw-grow-fsync", func() error {
		if _, err := raw.Write(batch); err != nil {
			return err
		}
		return raw.Sync()
	}, raw.Close})
	logs = append(logs, rawPairedLogs(b, dir, batch)...)

	spent := make([]time.Duration, len(logs))
	i := 0
	b.SetBytes(int64(len(batch)) * int64(len(logs)))
	for b.Loop() {
		for k := range logs {
			j := (i + k) % len(logs)
			start := time.Now()
			if err := logs[j].append(); err != nil {
				b.Fatal(logs[j].name, err)
			}
			spent[j] += time.Since(start)
		}
		i++
	}
	b.StopTimer()
	rate := map[string]float64{}
	for j, d := range logs {
		rate[d.name] = float64(i*len(recs)) / spent[j].Seconds()
		b.ReportMetric(rate[d.name], d.name+"-rec/s")
		if err := d.close(); err != nil {
			b.Fatal(d.name, err)
		}
	}
	ratio := func(a, base string) {
		if rate[base] > 0 {
			b.ReportMetric(rate[a]/rate[base], a+"/"+base)
		}
	}
	ratio("store", "tidwall-wal")
	ratio("store", "raw-grow-fsync")
	ratio("store", "raw-zeroed-fdatasync")
	ratio("partition", "raw-zeroed-fdatasync")
	ratio("segment-zerofill", "segment-grow")
	ratio("raw-zeroed-rwf-dsync", "raw-zeroed-fdatasync")
	ratio("raw-zeroed-o-dsync", "raw-zeroed-fdatasync")
	ratio("raw-zeroed-fdatasync", "raw-grow-fdatasync")
	ratio("raw-fallocate-fdatasync", "raw-grow-fdatasync")
	ratio("raw-grow-fdatasync", "raw-grow-fsync")
}
