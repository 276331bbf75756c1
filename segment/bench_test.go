package segment

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// benchBatch encodes one batch of about size bytes of 100-byte records.
func benchBatch(b *testing.B, size int) ([]byte, int64) {
	n := max(1, size/(100+20))
	recs := makeRecords(0, n, 100, 1_700_000_000_000)
	batch := encode(b, recs)
	return batch, int64(n)
}

// rollAt is where the append benchmarks start a new file, to stay far from
// the 2 GiB position limit and from filling the disk.
const rollAt = 256 << 20

// BenchmarkAppend appends batches of 64 KiB to a segment on the OS file
// system, beside the raw baseline: pwrite(2) of the same bytes to a plain
// file in the same directory.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10} {
		batch, n := benchBatch(b, size)
		b.Run(fmt.Sprintf("impl=segment/size=%dKiB", size>>10), func(b *testing.B) {
			dir := b.TempDir()
			s, err := Create(vfs.OS, dir, 0, Config{})
			require.NoError(b, err)
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				if s.Size() > rollAt {
					b.StopTimer()
					base := s.NextOffset()
					require.NoError(b, s.Delete())
					s, err = Create(vfs.OS, dir, base, Config{})
					require.NoError(b, err)
					b.StartTimer()
				}
				log.SetBaseOffset(batch, s.NextOffset())
				if err := s.Append(batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(int64(b.N)*n)/b.Elapsed().Seconds(), "records/s")
			require.NoError(b, s.Delete())
		})
		b.Run(fmt.Sprintf("impl=raw-pwrite/size=%dKiB", size>>10), func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "raw"))
			require.NoError(b, err)
			defer f.Close()
			var pos int64
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				if pos > rollAt {
					b.StopTimer()
					require.NoError(b, f.Truncate(0))
					pos = 0
					b.StartTimer()
				}
				if _, err := f.WriteAt(batch, pos); err != nil {
					b.Fatal(err)
				}
				pos += int64(len(batch))
			}
			b.ReportMetric(float64(int64(b.N)*n)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkReadSequential reads a 64 MiB segment of 64 KiB batches from start
// to end in 1 MiB reads (every batch CRC-checked), beside the raw baseline:
// pread(2) of the same file in 1 MiB chunks.
func BenchmarkReadSequential(b *testing.B) {
	const total = 64 << 20
	const chunk = 1 << 20
	dir := b.TempDir()
	s, err := Create(vfs.OS, dir, 0, Config{})
	require.NoError(b, err)
	batch, n := benchBatch(b, 64<<10)
	for s.Size() < total {
		log.SetBaseOffset(batch, s.NextOffset())
		require.NoError(b, s.Append(batch))
	}
	require.NoError(b, s.Seal())
	records := s.NextOffset()
	_ = n

	b.Run("impl=segment", func(b *testing.B) {
		buf := make([]byte, chunk)
		b.SetBytes(s.Size())
		b.ReportAllocs()
		for b.Loop() {
			for off := int64(0); off < s.NextOffset(); {
				got, err := s.Read(buf, off, chunk)
				if err != nil || len(got) == 0 {
					b.Fatal(err, len(got))
				}
				h, _ := log.ReadHeader(got[lastBatchStart(got):])
				off = h.NextOffset()
			}
		}
		b.ReportMetric(float64(int64(b.N)*records)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("impl=raw-pread", func(b *testing.B) {
		f, err := os.Open(s.Path())
		require.NoError(b, err)
		defer f.Close()
		buf := make([]byte, chunk)
		b.SetBytes(s.Size())
		b.ReportAllocs()
		for b.Loop() {
			for pos := int64(0); pos < s.Size(); pos += chunk {
				if _, err := f.ReadAt(buf[:min(chunk, s.Size()-pos)], pos); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(int64(b.N)*records)/b.Elapsed().Seconds(), "records/s")
	})
	require.NoError(b, s.Close())
}

// lastBatchStart returns the position of the last batch in batches.
func lastBatchStart(batches []byte) int {
	p := 0
	for {
		h, _ := log.ReadHeader(batches[p:])
		if p+h.Size() >= len(batches) {
			return p
		}
		p += h.Size()
	}
}

// BenchmarkReadRandom reads the batch holding a random offset of a 64 MiB
// segment of 4 KiB batches: an index lookup, a header scan and one batch.
func BenchmarkReadRandom(b *testing.B) {
	dir := b.TempDir()
	s, err := Create(vfs.OS, dir, 0, Config{})
	require.NoError(b, err)
	batch, _ := benchBatch(b, 4<<10)
	for s.Size() < 64<<20 {
		log.SetBaseOffset(batch, s.NextOffset())
		require.NoError(b, s.Append(batch))
	}
	buf := make([]byte, 64<<10)
	next := s.NextOffset()
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		i = (i*6364136223846793005 + 1442695040888963407) & (1<<62 - 1)
		if _, err := s.Read(buf, i%next, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
	require.NoError(b, s.Close())
}

// BenchmarkRecover recovers a 64 MiB segment (every batch CRC-checked, both
// indexes rebuilt), beside the raw baseline of reading the file and
// computing CRC-32C over it.
func BenchmarkRecover(b *testing.B) {
	dir := b.TempDir()
	s, err := Create(vfs.OS, dir, 0, Config{})
	require.NoError(b, err)
	batch, _ := benchBatch(b, 16<<10)
	for s.Size() < 64<<20 {
		log.SetBaseOffset(batch, s.NextOffset())
		require.NoError(b, s.Append(batch))
	}
	size := s.Size()
	require.NoError(b, s.Close())

	b.Run("impl=segment", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			s, rec, err := OpenRecover(vfs.OS, dir, 0, Config{})
			if err != nil || rec.Truncated != 0 {
				b.Fatal(err, rec)
			}
			require.NoError(b, s.Close())
		}
	})
	b.Run("impl=raw-read-crc", func(b *testing.B) {
		f, err := os.Open(filepath.Join(dir, FileName(0, LogSuffix)))
		require.NoError(b, err)
		defer f.Close()
		buf := make([]byte, 1<<20)
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for pos := int64(0); pos < size; pos += int64(len(buf)) {
				n, _ := f.ReadAt(buf, pos)
				crcSink ^= crc32c(buf[:n])
			}
		}
	})
}

var crcSink uint32

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// BenchmarkOpenClose opens a closed segment of 1 M records of 100 B (about
// 126 MB, its indexes as appends wrote them) on the OS file system,
// writable as a partition opens its active segment and read-only as it
// opens the others, and closes it.
func BenchmarkOpenClose(b *testing.B) {
	dir := b.TempDir()
	s, err := Create(vfs.OS, dir, 0, Config{})
	require.NoError(b, err)
	batch, _ := benchBatch(b, 12000) // 100 records
	for s.NextOffset() < 1_000_000 {
		log.SetBaseOffset(batch, s.NextOffset())
		require.NoError(b, s.Append(batch))
	}
	require.NoError(b, s.Close())
	for _, writable := range []bool{true, false} {
		b.Run(fmt.Sprintf("writable=%v", writable), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := Open(vfs.OS, dir, 0, Config{}, writable)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
