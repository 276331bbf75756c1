package partition

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/compaction"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// eager cleans whenever anything is dirty; tombstones live an hour.
var eager = compaction.Config{MinCleanableDirtyRatio: -1, DeleteRetention: time.Hour}

// kv is one write of the compaction tests: value nil is a tombstone.
type kv struct {
	key, value string
	tombstone  bool
}

func compactedPartition(t testing.TB) (*Partition, *vfs.Mem, *fakeClock) {
	clock := newClock()
	cfg := small(clock)
	cfg.Compacted = true
	p, m := memPartition(t, cfg)
	return p, m, clock
}

// writeKVs appends random writes over a few keys and returns them by offset.
func writeKVs(t testing.TB, p *Partition, r *rand.Rand, n int) map[int64]kv {
	out := map[int64]kv{}
	for range n {
		w := kv{key: fmt.Sprint("key-", r.IntN(12))}
		rec := log.Record{Key: []byte(w.key)}
		if r.IntN(8) == 0 {
			w.tombstone = true
		} else {
			w.value = fmt.Sprint("v", r.Uint32())
			rec.Value = []byte(w.value)
		}
		off, err := p.Append([]log.Record{rec})
		require.NoError(t, err)
		out[off] = w
	}
	return out
}

// checkCompacted reads the whole partition and checks it against what was
// written: offsets rise, every record is the one written at its offset, and
// the latest write of every key that is not a tombstone is there, as the
// key's last record.
func checkCompacted(t testing.TB, p *Partition, written map[int64]kv) {
	t.Helper()
	latest := map[string]int64{}
	for off, w := range written {
		if off > latest[w.key] || latest[w.key] == 0 {
			latest[w.key] = max(latest[w.key], off)
		}
	}
	recs := readRange(t, p, p.StartOffset())
	seen := map[string]int64{}
	prev := int64(-1)
	for _, r := range recs {
		require.Greater(t, r.Offset, prev, "offsets rise")
		prev = r.Offset
		w, ok := written[r.Offset]
		require.True(t, ok, "offset %d was never written", r.Offset)
		require.Equal(t, w.key, string(r.Key))
		if w.tombstone {
			require.Nil(t, r.Value, "offset %d is a tombstone", r.Offset)
		} else {
			require.Equal(t, w.value, string(r.Value))
		}
		seen[w.key] = r.Offset
	}
	for key, off := range latest {
		if written[off].tombstone {
			continue // may have expired
		}
		require.Equal(t, off, seen[key], "the latest value of %s is there, last", key)
	}
}

func TestCompactKeepsLatestPerKey(t *testing.T) {
	p, _, clock := compactedPartition(t)
	r := rand.New(rand.NewPCG(1, 1))
	written := writeKVs(t, p, r, 600)
	before := p.Stats().Bytes
	st, err := p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	require.Positive(t, st.RecordsRead)
	require.Less(t, p.Stats().Bytes, before/2, "most records were superseded")
	checkCompacted(t, p, written)

	// More writes, more cleanings, time passing beyond the tombstones'
	// horizon: still the latest value of every live key.
	for round := range 4 {
		for off, w := range writeKVs(t, p, r, 150) {
			written[off] = w
		}
		clock.Add(time.Duration(round) * 40 * time.Minute)
		_, err := p.Compact(clock.Now(), eager)
		require.NoError(t, err)
		checkCompacted(t, p, written)
	}
	end := p.EndOffset()
	require.NoError(t, p.Close())
	require.Positive(t, end)
}

func TestCompactSurvivesReopenAndReaders(t *testing.T) {
	p, m, clock := compactedPartition(t)
	r := rand.New(rand.NewPCG(2, 2))
	written := writeKVs(t, p, r, 400)

	// Readers run through the swaps.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for ctx.Err() == nil {
				rd := p.NewReader(p.StartOffset())
				var x log.Record
				for {
					ok, err := rd.Next(&x)
					if err != nil || !ok {
						break
					}
					w := written[x.Offset]
					if w.key != string(x.Key) || (!w.tombstone && !bytes.Equal([]byte(w.value), x.Value)) {
						t.Errorf("offset %d: read something else than was written", x.Offset)
					}
				}
				rd.Close()
			}
		})
	}
	wg.Go(func() { // a tailing iterator, through the swaps and past them
		for x, err := range p.Records(ctx, 0) {
			if err != nil {
				if ctx.Err() == nil {
					t.Error(err)
				}
				return
			}
			w := written[x.Offset]
			if w.key != string(x.Key) {
				t.Errorf("offset %d: the tailing iterator read something else", x.Offset)
			}
		}
	})
	for range 3 {
		_, err := p.Compact(clock.Now(), eager)
		require.NoError(t, err)
	}
	cancel()
	wg.Wait()
	checkCompacted(t, p, written)
	require.NoError(t, p.Close())

	cfg := small(clock)
	cfg.Compacted = true
	p, err := Open(m, "topic-0", cfg, true)
	require.NoError(t, err)
	checkCompacted(t, p, written)
	require.NoError(t, p.Close())
}

// TestCrashDuringCompaction crashes at every write, sync, rename or removal
// of a compaction: the reopened partition still holds the latest value of
// every key and nothing that was not written.
func TestCrashDuringCompaction(t *testing.T) {
	ops := []vfs.Op{vfs.OpWrite, vfs.OpWriteMap, vfs.OpAllocate, vfs.OpSync, vfs.OpSyncDir, vfs.OpRename, vfs.OpRemove, vfs.OpCreate, vfs.OpTruncate, vfs.OpSyncMap}
	build := func() (*Partition, *vfs.Mem, *fakeClock, map[int64]kv) {
		p, m, clock := compactedPartition(t)
		written := writeKVs(t, p, rand.New(rand.NewPCG(3, 3)), 300)
		require.NoError(t, p.Sync())
		return p, m, clock, written
	}
	p, m, clock, _ := build()
	before := opsIn(m, ops)
	_, err := p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	total := opsIn(m, ops) - before
	require.Positive(t, total)

	for k := 0; k <= total; k++ {
		p, m, clock, written := build()
		m.SetInjector(vfs.FailAfter(k, ops...))
		_, _ = p.Compact(clock.Now(), eager)
		after := m.Crash()
		cfg := small(clock)
		cfg.Compacted = true
		p2, err := Open(after, "topic-0", cfg, false)
		require.NoError(t, err, "k=%d", k)
		require.Equal(t, int64(300), p2.EndOffset(), "k=%d", k)
		checkCompacted(t, p2, written)
		require.NoError(t, p2.Close())
	}
}

// TestReaderAtRemovedOffset: a reader positioned at an offset compaction
// removed continues at the next retained offset.
func TestReaderAtRemovedOffset(t *testing.T) {
	p, _, clock := compactedPartition(t)
	for i := range 200 {
		_, err := p.Append([]log.Record{{Key: []byte(fmt.Sprint("k", i%5)), Value: []byte(fmt.Sprint(i))}})
		require.NoError(t, err)
	}
	rd := p.NewReader(3) // k3's first value: superseded, so removed
	defer rd.Close()
	_, err := p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	var x log.Record
	ok, err := rd.Next(&x)
	require.NoError(t, err)
	require.True(t, ok)
	require.Greater(t, x.Offset, int64(3), "the next retained offset")
	_, err = p.ReadBatches(nil, 3, 1)
	require.NoError(t, err, "an offset in a gap is not out of range")
}

// BenchmarkCompact cleans a partition of 1 GiB of 100 B records (on the OS
// file system) where 10% of the keys are live, reporting MB/s and
// records/s of the cleaning, and the offset map's bytes per key.
func BenchmarkCompact(b *testing.B) {
	const records = 8_000_000 // ~1 GiB with headers
	const keys = records / 10
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cfg := benchConfig(SyncNever)
		cfg.Compacted = true
		cfg.SegmentBytes = 128 << 20
		p, err := Open(vfs.OS, b.TempDir(), cfg, false)
		require.NoError(b, err)
		batch := make([]log.Record, 100)
		for j := range batch {
			batch[j].Value = make([]byte, 100)
		}
		for n := 0; n < records; n += len(batch) {
			for j := range batch {
				batch[j].Key = fmt.Appendf(batch[j].Key[:0], "key-%07d", (n+j)%keys)
			}
			_, err := p.Append(batch)
			require.NoError(b, err)
		}
		_, err = p.Append(batch[:1]) // roll nothing more: the last segment stays active
		require.NoError(b, err)
		bytes := p.Stats().Bytes
		b.StartTimer()
		st, err := p.Compact(time.Now(), compaction.Config{MinCleanableDirtyRatio: -1, BufferBytes: 64 << 20})
		b.StopTimer()
		require.NoError(b, err)
		require.Positive(b, st.RecordsRead)
		secs := b.Elapsed().Seconds()
		b.ReportMetric(float64(bytes)/1e6/secs, "MB/s")
		b.ReportMetric(float64(st.RecordsRead)/secs, "records/s")
		m := compaction.Config{BufferBytes: 64 << 20}.NewOffsetMap()
		for k := range keys {
			m.Put(fmt.Appendf(nil, "key-%07d", k), int64(k))
		}
		b.ReportMetric(m.BytesPerKey(), "map-bytes/key")
		require.NoError(b, p.Close())
	}
}
