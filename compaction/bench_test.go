package compaction

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// BenchmarkClean measures a whole round — BuildMap, Group and Clean of every
// group — over a log of 64 MiB of 16-byte keys and 100-byte values in
// batches of 10, on the in-memory FS, where a tenth of the records are the
// latest of their key.
func BenchmarkClean(b *testing.B) {
	for _, live := range []int{10, 50} {
		b.Run(fmt.Sprintf("log=64MiB/live=%d%%", live), func(b *testing.B) {
			benchClean(b, 64<<20, live)
		})
	}
}

func benchClean(b *testing.B, logBytes int64, livePercent int) {
	const segBytes = 8 << 20
	l := newTestLog(b, segBytes)
	rng := rand.New(rand.NewPCG(1, 2))
	value := make([]byte, 100)
	const perRecord = 130 // about: 16 + 100 + overhead
	nrec := int(logBytes / perRecord)
	nkeys := nrec * livePercent / 100
	recs := make([]log.Record, 10)
	for written := 0; written < nrec; written += len(recs) {
		for i := range recs {
			recs[i] = log.Record{Key: fmt.Appendf(nil, "key-%012d", rng.IntN(nkeys)), Value: value}
		}
		l.write(recs...)
	}
	l.roll()
	var size int64
	for _, s := range l.segs {
		size += s.Size()
	}
	m := NewOffsetMap(64<<20, nil)
	cfg := l.cfg
	cfg.MaxBytes = segBytes
	cfg.MaxIndexBytes = 256 << 10
	create := func(base int64) (*segment.Segment, error) {
		return segment.Create(l.fs, "cleaned", base, cfg)
	}
	require.NoError(b, l.fs.MkdirAll("cleaned", 0o755))

	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	var st Stats
	for b.Loop() {
		m.reset()
		end, err := BuildMap(m, l.segs, 0, l.active().Base(), 0)
		require.NoError(b, err)
		st = Stats{}
		for _, g := range Group(l.infos(), end, segBytes, 0) {
			out, gst, err := Clean(l.segs[g.Start:g.End], create, Round{Map: m, End: end, Now: t0})
			require.NoError(b, err)
			st.Add(gst)
			for _, s := range out {
				require.NoError(b, s.Delete())
			}
		}
	}
	b.ReportMetric(float64(st.RecordsRead)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(st.BytesWritten)/float64(st.BytesRead), "out/in")
	b.ReportMetric(m.BytesPerKey(), "map-B/key")
}

// BenchmarkOffsetMapPut measures putting new keys into an offset map of
// DefaultBufferBytes until it is full, and what a key costs when it is.
func BenchmarkOffsetMapPut(b *testing.B) {
	for _, keyLen := range []int{8, 16, 64} {
		b.Run(fmt.Sprintf("key=%dB", keyLen), func(b *testing.B) {
			const n = 4 << 20
			keys := make([][]byte, n)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "%0*d", keyLen, i)
			}
			m := NewOffsetMap(DefaultBufferBytes, nil)
			full := 0.0
			fullKeys := 0
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if !m.Put(keys[i], int64(i)) {
					full, fullKeys = m.BytesPerKey(), m.Len()
					m.reset()
					i = 0
					continue
				}
				if i++; i == n {
					b.Fatal("never full")
				}
			}
			if fullKeys > 0 {
				b.ReportMetric(full, "B/key")
				b.ReportMetric(float64(fullKeys), "keys/32MiB")
			}
		})
	}
}

// BenchmarkOffsetMapGet measures looking keys up in a map of a million.
func BenchmarkOffsetMapGet(b *testing.B) {
	const n = 1 << 20
	keys := make([][]byte, n)
	m := NewOffsetMap(64<<20, nil)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "%016d", i)
		require.True(b, m.Put(keys[i], int64(i)))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok := m.Get(keys[i&(n-1)]); !ok {
			b.Fatal("missing key")
		}
		i++
	}
}
