package partition

import (
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/internal/cputime"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/retention"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// benchRecords returns n records with 100-byte values and 8-byte keys.
func benchRecords(n int) []log.Record {
	recs := make([]log.Record, n)
	for i := range recs {
		recs[i] = log.Record{Key: fmt.Appendf(nil, "k%07d", i), Value: make([]byte, 100)}
	}
	return recs
}

// benchConfig is the default configuration with the given flush policy and
// a quiet logger.
func benchConfig(sync SyncPolicy) Config {
	return Config{Sync: sync, Logger: slog.New(slog.DiscardHandler)}
}

// encodedSize is the size of recs as one batch.
func encodedSize(b *testing.B, recs []log.Record) int {
	batch, err := log.EncodeBatch(nil, recs, log.BatchOptions{})
	require.NoError(b, err)
	return len(batch)
}

// rawWriter is the baseline of the append benchmarks: write(2) of size
// bytes at a time to plain files, optionally each followed by fsync. Like
// segments, a file is written up to DefaultSegmentBytes and then a new one
// is started (the old one kept, as segments are), so both sides leave the
// same amount of dirty data for the kernel to write back.
func rawWriter(b *testing.B, size int, fsync bool, perOp int) {
	dir := b.TempDir()
	open := func(i int) *os.File {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("raw-%d", i)))
		require.NoError(b, err)
		return f
	}
	files := 0
	f := open(files)
	defer func() { f.Close() }()
	buf := make([]byte, size)
	written := 0
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if written+size > DefaultSegmentBytes {
			f.Close()
			files++
			f = open(files)
			written = 0
		}
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if fsync {
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
		written += size
	}
	b.ReportMetric(float64(b.N*perOp)/b.Elapsed().Seconds(), "records/s")
}

// rawMapped is the baseline of the mapped write path: a copy of size bytes at
// a time into a shared mapping of a file reserved ahead with fallocate in
// 16 MiB steps, a new file every DefaultSegmentBytes (the old one removed).
func rawMapped(b *testing.B, size int, perOp int) {
	dir := b.TempDir()
	var f vfs.File
	var data []byte
	var pos, allocated int64
	files := 0
	open := func() {
		if f != nil {
			require.NoError(b, f.Unmap(data))
			require.NoError(b, f.Close())
			require.NoError(b, os.Remove(f.Name()))
		}
		var err error
		f, err = vfs.OS.OpenFile(filepath.Join(dir, fmt.Sprintf("raw-%d", files)), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(b, err)
		data, err = f.Map(DefaultSegmentBytes)
		require.NoError(b, err)
		files++
		pos, allocated = 0, 0
	}
	open()
	defer func() { f.Unmap(data); f.Close() }()
	buf := make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		end := pos + int64(size)
		if end > DefaultSegmentBytes {
			open()
			end = int64(size)
		}
		if end > allocated {
			allocated = min(allocated+16<<20, DefaultSegmentBytes)
			if err := f.Allocate(allocated); err != nil {
				b.Fatal(err)
			}
		}
		copy(data[pos:end], buf)
		pos = end
	}
	b.ReportMetric(float64(b.N*perOp)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkAppend appends 100 B records, one per call and in batches of 100,
// under SyncNever, with Append and with AppendProduced (an idempotent
// producer's batches), beside write(2) of the same number of bytes per call (the
// target's baseline) and, for single records, the partition with
// Config.WriteCalls (pwrite instead of the copy into the mapping) and a bare
// copy into a mapped file (what the partition does with them, without
// encoding a batch); for batches, the partition appending a batch encoded
// once beforehand (what the append costs without the encoding).
func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{1, 100} {
		recs := benchRecords(n)
		size := encodedSize(b, recs)
		b.Run(fmt.Sprintf("impl=partition/records=%d/size=100B", n), func(b *testing.B) {
			benchAppend(b, benchConfig(SyncNever), recs, size, false)
		})
		b.Run(fmt.Sprintf("impl=partition-produced/records=%d/size=100B", n), func(b *testing.B) {
			benchProduced(b, benchConfig(SyncNever), recs, size)
		})
		if n == 1 {
			b.Run(fmt.Sprintf("impl=partition-writecalls/records=%d/size=100B", n), func(b *testing.B) {
				cfg := benchConfig(SyncNever)
				cfg.WriteCalls = true
				benchAppend(b, cfg, recs, size, false)
			})
		} else {
			b.Run(fmt.Sprintf("impl=partition-preencoded/records=%d/size=100B", n), func(b *testing.B) {
				benchAppend(b, benchConfig(SyncNever), recs, size, true)
			})
		}
		b.Run(fmt.Sprintf("impl=raw-write/records=%d/size=100B", n), func(b *testing.B) {
			rawWriter(b, size, false, n)
		})
		if n == 1 {
			b.Run(fmt.Sprintf("impl=raw-mapped/records=%d/size=100B", n), func(b *testing.B) {
				rawMapped(b, size, n)
			})
		}
	}
}

// benchAppend appends recs (size bytes encoded) per call to a partition
// opened with cfg; preencoded encodes them once before the loop and appends
// that batch with AppendEncoded, which leaves out the encoding.
func benchAppend(b *testing.B, cfg Config, recs []log.Record, size int, preencoded bool) {
	p, err := Open(vfs.OS, b.TempDir(), cfg, false)
	require.NoError(b, err)
	batch, err := p.Encode(nil, recs)
	require.NoError(b, err)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	cpu0, cpuOK := cputime.Process()
	for b.Loop() {
		if preencoded {
			_, err = p.AppendEncoded(batch)
		} else {
			_, err = p.Append(recs)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	cpu1, _ := cputime.Process()
	b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
	if cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
	require.NoError(b, p.Close())
}

// benchProduced is benchAppend with AppendProduced: every batch stamped
// by one producer, its sequence checked and remembered.
func benchProduced(b *testing.B, cfg Config, recs []log.Record, size int) {
	p, err := Open(vfs.OS, b.TempDir(), cfg, false)
	require.NoError(b, err)
	pb := ProducerBatch{ID: 1}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.AppendProduced(recs, pb, cfg.Compression, cfg.CompressionLevel); err != nil {
			b.Fatal(err)
		}
		pb.Seq = log.IncrementSequence(pb.Seq, int32(len(recs)))
	}
	b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
	require.NoError(b, p.Close())
}

// BenchmarkAppendSyncAlways appends under SyncAlways: one appender of
// batches of 100 beside write(2)+fsync of the same size, and 1, 4 and 16
// concurrent appenders of single records, whose fsyncs group commit shares.
func BenchmarkAppendSyncAlways(b *testing.B) {
	recs := benchRecords(100)
	size := encodedSize(b, recs)
	for _, prealloc := range []bool{false, true} {
		b.Run(fmt.Sprintf("impl=partition/appenders=1/records=100/prealloc=%v", prealloc), func(b *testing.B) {
			cfg := benchConfig(SyncAlways)
			cfg.Preallocate = prealloc
			cfg.SegmentBytes = 256 << 20
			p, err := Open(vfs.OS, b.TempDir(), cfg, false)
			require.NoError(b, err)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Append(recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "records/s")
			require.NoError(b, p.Close())
		})
	}
	b.Run("impl=raw-write-fsync/records=100", func(b *testing.B) {
		rawWriter(b, size, true, 100)
	})
	one := benchRecords(1)
	for _, appenders := range []int{1, 4, 16, 64} {
		for _, prealloc := range []bool{false, true} {
			b.Run(fmt.Sprintf("impl=partition/appenders=%d/records=1/prealloc=%v", appenders, prealloc), func(b *testing.B) {
				cfg := benchConfig(SyncAlways)
				cfg.Preallocate = prealloc
				cfg.SegmentBytes = 256 << 20
				p, err := Open(vfs.OS, b.TempDir(), cfg, false)
				require.NoError(b, err)
				b.ReportAllocs()
				b.ResetTimer()
				var wg sync.WaitGroup
				per := b.N/appenders + 1
				for range appenders {
					wg.Go(func() {
						for range per {
							if _, err := p.Append(one); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				st := p.Stats()
				secs := b.Elapsed().Seconds()
				b.ReportMetric(float64(st.AppendedRecords)/secs, "records/s")
				b.ReportMetric(float64(st.Fsyncs)/secs, "fsyncs/s")
				require.NoError(b, p.Close())
			})
		}
	}
	b.Run("impl=raw-write-fsync/records=1", func(b *testing.B) {
		rawWriter(b, encodedSize(b, one), true, 1)
	})
}

// fillPartition writes records 100-byte records in batches of 100 to a
// partition in dir and closes it cleanly.
// readAllRecords reads p from offset 0 to its end with one Reader and
// returns how many records it read.
func readAllRecords(b *testing.B, p *Partition) int {
	r := p.NewReader(0)
	defer r.Close()
	var rec log.Record
	n := 0
	for {
		ok, err := r.Next(&rec)
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			return n
		}
		n++
	}
}

func fillPartition(b *testing.B, dir string, records int) {
	p, err := Open(vfs.OS, dir, benchConfig(SyncNever), false)
	require.NoError(b, err)
	recs := benchRecords(100)
	for range records / 100 {
		_, err := p.Append(recs)
		require.NoError(b, err)
	}
	require.NoError(b, p.Close())
}

// BenchmarkRead reads 1 M records of 100 B: sequentially with a Reader
// (every batch CRC-checked, every record decoded), and at random offsets
// (see randomLookups and randomReadRecords), in batches of 100 records and
// of one, beside the
// cost of one random load from the mapped file (rawRandomLoads).
func BenchmarkRead(b *testing.B) {
	const records = 1_000_000
	dir := b.TempDir()
	fillPartition(b, dir, records)
	p, err := Open(vfs.OS, dir, benchConfig(SyncNever), true)
	require.NoError(b, err)
	defer p.Close()

	b.Run("mode=sequential/records=1M", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n := readAllRecords(b, p); n != records {
				b.Fatalf("read %d records", n)
			}
		}
		b.ReportMetric(float64(b.N*records)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("mode=random/api=raw-mapped-load/records=1M", rawRandomLoads(dir))
	b.Run("mode=random/api=reader/batch=100/records=1M", randomLookups(p, records, true))
	b.Run("mode=random/api=readbatches/batch=100/records=1M", randomLookups(p, records, false))
	b.Run("mode=random/api=readrecord/batch=100/records=1M", randomReadRecords(p, records))

	// Records appended one per call, as an event log often is: a lookup
	// reads one small batch.
	single := b.TempDir()
	ps, err := Open(vfs.OS, single, benchConfig(SyncNever), false)
	require.NoError(b, err)
	defer ps.Close()
	one := benchRecords(1)
	for range records {
		_, err := ps.Append(one)
		require.NoError(b, err)
	}
	b.Run("mode=random/api=reader/batch=1/records=1M", randomLookups(ps, records, true))
	b.Run("mode=random/api=readbatches/batch=1/records=1M", randomLookups(ps, records, false))
	b.Run("mode=random/api=readrecord/batch=1/records=1M", randomReadRecords(ps, records))
}

// rawRandomLoads is the baseline of the random lookups: one byte loaded at
// a pseudo-random position of the partition's (only) log file, mapped, each
// position depending on the byte loaded before, so that the loads cannot
// overlap. It is what the machine's memory and TLB make a cache miss cost
// in the same run; any lookup pays at least one.
func rawRandomLoads(dir string) func(b *testing.B) {
	return func(b *testing.B) {
		logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
		require.NoError(b, err)
		require.Len(b, logs, 1)
		f, err := vfs.OS.OpenFile(logs[0], os.O_RDWR, 0)
		require.NoError(b, err)
		defer f.Close()
		st, err := os.Stat(logs[0])
		require.NoError(b, err)
		data, err := f.Map(int(st.Size()))
		require.NoError(b, err)
		defer f.Unmap(data)
		var sink byte
		for i := 0; i < len(data); i += 4096 {
			sink ^= data[i] // fault the pages in first, as the partition's are
		}
		b.ReportAllocs()
		x, sum := uint64(1), uint64(0)
		for b.Loop() {
			x = x*6364136223846793005 + 1442695040888963407 + uint64(data[(x>>1)%uint64(len(data))])
			sum += x
		}
		require.NotZero(b, sum+uint64(sink))
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
	}
}

// randomLookups looks up a pseudo-random offset of p's first records per
// iteration, reporting lookups/s. With a Reader (viaReader), a lookup is
// what a user fetching the record at offset X does: SetOffset(X), then Next
// returns that record (offset, timestamp, key, value) decoded in place from
// the segment's mapping, nothing copied. Otherwise it is ReadBatches(buf, X,
// 1): the whole batch holding X copied into buf, its records not decoded.
func randomLookups(p *Partition, records int64, viaReader bool) func(b *testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 64<<10)
		r := p.NewReader(0)
		defer r.Close()
		var rec log.Record
		x := uint64(1)
		for b.Loop() {
			x = x*6364136223846793005 + 1442695040888963407
			off := int64(x>>1) % records
			if viaReader {
				r.SetOffset(off)
				if ok, err := r.Next(&rec); !ok || rec.Offset != off {
					b.Fatal(ok, rec.Offset, err)
				}
				continue
			}
			out, err := p.ReadBatches(buf, off, 1)
			if err != nil || len(out) == 0 {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
	}
}

// randomReadRecords is randomLookups with ReadRecord: the record at a
// pseudo-random offset copied into a buffer reused for every lookup.
func randomReadRecords(p *Partition, records int64) func(b *testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 4096)
		var rec log.Record
		x := uint64(1)
		for b.Loop() {
			x = x*6364136223846793005 + 1442695040888963407
			off := int64(x>>1) % records
			if _, err := p.ReadRecord(off, &rec, buf); err != nil || rec.Offset != off {
				b.Fatal(rec.Offset, err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
	}
}

// BenchmarkOpen opens a partition of 1 M records of 100 B: after a clean
// shutdown (the files are trusted), and after a crash (the active segment,
// ~100 MB, is recovered), beside reading the same bytes and computing their
// CRC-32C; and, after a clean shutdown, the same partition with 1000
// producers' batches at its end (their state read from the snapshot Close
// wrote).
func BenchmarkOpen(b *testing.B) {
	const records = 1_000_000
	dir := b.TempDir()
	fillPartition(b, dir, records)
	withProducers := b.TempDir()
	fillPartition(b, withProducers, records)
	p, err := Open(vfs.OS, withProducers, benchConfig(SyncNever), true)
	require.NoError(b, err)
	for id := range 1000 {
		_, _, err := p.AppendProduced(benchRecords(1), ProducerBatch{ID: int64(id)}, log.None, 0)
		require.NoError(b, err)
	}
	require.NoError(b, p.Close())
	b.Run("impl=partition-producers=1000/clean=true/records=1M", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := Open(vfs.OS, withProducers, benchConfig(SyncNever), true)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			require.NoError(b, p.Close())
			b.StartTimer()
		}
	})
	for _, clean := range []bool{true, false} {
		b.Run(fmt.Sprintf("impl=partition/clean=%v/records=1M", clean), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := Open(vfs.OS, dir, benchConfig(SyncNever), clean)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				require.NoError(b, p.Close())
				b.StartTimer()
			}
		})
	}
	b.Run("impl=raw-read-crc/records=1M", func(b *testing.B) {
		path := filepath.Join(dir, segment.FileName(0, segment.LogSuffix))
		table := crc32.MakeTable(crc32.Castagnoli)
		buf := make([]byte, 1<<20)
		b.ReportAllocs()
		for b.Loop() {
			f, err := os.Open(path)
			require.NoError(b, err)
			var sum uint32
			for {
				n, err := f.Read(buf)
				sum = crc32.Update(sum, table, buf[:n])
				if err != nil {
					break
				}
			}
			f.Close()
		}
	})
}

// BenchmarkEnforceRetention times a retention pass over a partition of
// 10 000 segments (on the in-memory file system, to time the pass rather
// than the disk): one that finds nothing to delete, as most periodic passes
// do, and one that deletes 9 999 of them.
func BenchmarkEnforceRetention(b *testing.B) {
	const segments = 10_000
	build := func() (*Partition, *fakeClock) {
		clock := newClock()
		cfg := small(clock)
		cfg.SegmentBytes = 256
		cfg.MaxBatchBytes = 256
		cfg.MaxIndexBytes = 24
		m := vfs.NewMem()
		p, err := Open(m, "t-0", cfg, false)
		require.NoError(b, err)
		one := []log.Record{{Value: make([]byte, 100)}}
		for p.Stats().Segments < segments {
			clock.Add(time.Second)
			_, err := p.Append(one)
			require.NoError(b, err)
		}
		return p, clock
	}
	keep := retention.Policy{RetentionMs: -1, RetentionBytes: -1, DeleteByTimeAndSize: true}
	b.Run("segments=10000/deletes=none", func(b *testing.B) {
		p, clock := build()
		b.ReportAllocs()
		for b.Loop() {
			if n, err := p.EnforceRetention(clock.Now(), keep); err != nil || n != 0 {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("segments=10000/deletes=9999", func(b *testing.B) {
		expire := retention.Policy{RetentionMs: 1, RetentionBytes: -1, DeleteByTimeAndSize: true}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			p, clock := build()
			clock.Add(time.Hour)
			p.EnforceRetention(clock.Now(), keep) // nothing: warm
			b.StartTimer()
			n, err := p.EnforceRetention(clock.Now(), expire)
			if err != nil || n < segments-1 {
				b.Fatal(n, err)
			}
		}
	})
}
