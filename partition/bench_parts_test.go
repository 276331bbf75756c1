package partition

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/internal/cputime"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// partsRound is the number of ops BenchmarkAppendParts runs of one part
// before it moves to the next.
const partsRound = 200

// BenchmarkAppendParts puts the cost of Append beside that of what it has
// to do, measured in the same run and interleaved in rounds of partsRound
// ops, so that the machine's drift hits all of them alike. The parts:
//
//   - encode: log.EncodeBatch of the records into a reused buffer;
//   - write: the encoded batch written to a file in the same directory as
//     a segment takes it (see rawSink);
//   - encode+write: both, one after the other for each batch, as an append
//     does them;
//   - append: Append of the records to a partition under SyncNever;
//   - append-encoded: AppendEncoded of a batch encoded once beforehand (the
//     append without the encoding).
//
// Each op does every part; the benchmark reports each part's wall-clock
// time per op (<part>-ns/op) and the process's CPU time per op
// (<part>-cpu-ns/op), which other processes on a shared machine disturb
// less, and, for both, encwrite/append, (encode+write) / append: 1 when the
// append costs nothing beyond encoding and writing its batch. parts/append
// is (encode + write) / append with the two parts measured apart, each in
// its own loop over hot caches: a lower bound that no append interleaving
// them can reach.
func BenchmarkAppendParts(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("records=%d/size=100B", n), func(b *testing.B) {
			recs := benchRecords(n)
			dir := b.TempDir()
			p, err := Open(vfs.OS, filepath.Join(dir, "p"), benchConfig(SyncNever), false)
			require.NoError(b, err)
			defer func() { require.NoError(b, p.Close()) }()
			opts := log.BatchOptions{Now: time.Now().UnixMilli()}
			batch, err := log.EncodeBatch(nil, recs, opts)
			require.NoError(b, err)
			sink := newRawSink(b, dir, len(batch) <= mappedWriteLimit)
			defer sink.close()
			buf := make([]byte, 0, len(batch))
			pre, err := p.Encode(nil, recs)
			require.NoError(b, err)
			encode := func() {
				if buf, err = log.EncodeBatch(buf[:0], recs, opts); err != nil {
					b.Fatal(err)
				}
			}
			parts := []struct {
				name      string
				op        func()
				wall, cpu time.Duration
			}{
				{name: "encode", op: encode},
				{name: "write", op: func() { sink.write(batch) }},
				{name: "encwrite", op: func() { encode(); sink.write(buf) }},
				{name: "append", op: func() {
					if _, err := p.Append(recs); err != nil {
						b.Fatal(err)
					}
				}},
				{name: "appendenc", op: func() {
					if _, err := p.AppendEncoded(pre); err != nil {
						b.Fatal(err)
					}
				}},
			}
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; {
				k := min(partsRound, b.N-done)
				for i := range parts {
					pt := &parts[i]
					t0 := time.Now()
					c0, _ := cputime.Process()
					for range k {
						pt.op()
					}
					c1, _ := cputime.Process()
					pt.wall += time.Since(t0)
					pt.cpu += c1 - c0
				}
				done += k
			}
			b.StopTimer()
			_, withCPU := cputime.Process()
			for _, pt := range parts {
				b.ReportMetric(float64(pt.wall.Nanoseconds())/float64(b.N), pt.name+"-ns/op")
				if withCPU {
					b.ReportMetric(float64(pt.cpu.Nanoseconds())/float64(b.N), pt.name+"-cpu-ns/op")
				}
			}
			enc, write, encwrite, app := parts[0], parts[1], parts[2], parts[3]
			b.ReportMetric(float64(encwrite.wall)/float64(app.wall), "encwrite/append")
			b.ReportMetric(float64(enc.wall+write.wall)/float64(app.wall), "parts/append")
			if withCPU {
				b.ReportMetric(float64(encwrite.cpu)/float64(app.cpu), "encwrite/append-cpu")
				b.ReportMetric(float64(enc.cpu+write.cpu)/float64(app.cpu), "parts/append-cpu")
			}
		})
	}
}

// mappedWriteLimit is the largest batch a segment copies into its mapping
// rather than writing with pwrite(2) (segment's mappedWriteMax; see
// Config.WriteCalls).
const mappedWriteLimit = 4<<10 - 1

// rawSink writes batches as a segment's file takes them, without the
// segment: at the end of a file in the benchmark's directory, a new file
// every DefaultSegmentBytes (the old one kept, as segments are), with
// pwrite(2) or, for the small batches a segment copies into its mapping, by
// a copy into a shared mapping of the file reserved ahead with fallocate in
// 16 MiB steps.
type rawSink struct {
	b         *testing.B
	dir       string
	mapped    bool
	files     int
	f         vfs.File
	data      []byte // the mapping, if mapped
	pos       int64
	allocated int64
}

func newRawSink(b *testing.B, dir string, mapped bool) *rawSink {
	s := &rawSink{b: b, dir: dir, mapped: mapped}
	s.next()
	return s
}

// next starts the next file.
func (s *rawSink) next() {
	s.close()
	f, err := vfs.OS.OpenFile(filepath.Join(s.dir, fmt.Sprintf("raw-%d", s.files)), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(s.b, err)
	s.f, s.files, s.pos, s.allocated = f, s.files+1, 0, 0
	if s.mapped {
		s.data, err = f.Map(DefaultSegmentBytes)
		require.NoError(s.b, err)
	}
}

func (s *rawSink) write(batch []byte) {
	end := s.pos + int64(len(batch))
	if end > DefaultSegmentBytes {
		s.next()
		end = int64(len(batch))
	}
	if !s.mapped {
		if _, err := s.f.WriteAt(batch, s.pos); err != nil {
			s.b.Fatal(err)
		}
		s.pos = end
		return
	}
	if end > s.allocated {
		s.allocated = min(s.allocated+16<<20, DefaultSegmentBytes)
		if err := s.f.Allocate(s.allocated); err != nil {
			s.b.Fatal(err)
		}
	}
	copy(s.data[s.pos:end], batch)
	s.pos = end
}

func (s *rawSink) close() {
	if s.f == nil {
		return
	}
	if s.data != nil {
		require.NoError(s.b, s.f.Unmap(s.data))
		s.data = nil
	}
	require.NoError(s.b, s.f.Close())
	s.f = nil
}
