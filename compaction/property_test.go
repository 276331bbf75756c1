package compaction

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// written is a record as the model remembers it.
type written struct {
	key, value []byte // nil key: key-less; nil value: tombstone
	ts         int64
	headers    string
}

func headersString(hs []log.Header) string { return fmt.Sprintf("%q", hs) }

// model is what was written to a testLog, for TestCleanProperty.
type model struct {
	recs      map[int64]written
	batches   map[int64]int64  // base offset → last offset of every batch written
	latest    map[string]int64 // key → offset of its latest record
	firstSeen map[int64]int64  // tombstone offset → time (ms) of the first round that copied it
}

// TestCleanProperty writes random keys, values, tombstones and key-less
// records into a chain of segments, cleans again and again with a clock
// that moves on and maps, groups and output segments of random sizes, and
// checks the log against a model after every round; at the end, with every
// tombstone expired, the log must hold exactly the latest value of every
// key that was not deleted.
func TestCleanProperty(t *testing.T) {
	seeds := 24
	if testing.Short() {
		seeds = 6
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { runProperty(t, uint64(seed)) })
	}
}

func runProperty(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	const retention = time.Hour
	cfg := Config{DeleteRetention: retention}
	l := newTestLog(t, int64(1+rng.IntN(4))<<10)
	md := &model{recs: map[int64]written{}, batches: map[int64]int64{}, latest: map[string]int64{}, firstSeen: map[int64]int64{}}
	nkeys := 5 + rng.IntN(30)
	now := t0
	firstDirty := int64(0)

	write := func() {
		recs := make([]log.Record, 1+rng.IntN(6))
		for i := range recs {
			r := &recs[i]
			r.Timestamp = now.Add(time.Duration(rng.IntN(5000)-2500) * time.Millisecond)
			if rng.IntN(10) > 0 {
				r.Key = fmt.Appendf(nil, "key-%d", rng.IntN(nkeys))
			}
			if rng.IntN(6) > 0 || r.Key == nil {
				r.Value = fmt.Appendf(nil, "value-%d-%d", l.next+int64(i), rng.IntN(1000))
			}
			for range rng.IntN(3) {
				r.Headers = append(r.Headers, log.Header{Key: "h", Value: fmt.Appendf(nil, "%d", rng.IntN(10))})
			}
		}
		base := l.write(recs...)
		md.batches[base] = base + int64(len(recs)) - 1
		for i, r := range recs {
			off := base + int64(i)
			md.recs[off] = written{key: r.Key, value: r.Value, ts: r.Timestamp.UnixMilli(), headers: headersString(r.Headers)}
			if r.Key != nil {
				md.latest[string(r.Key)] = off
			}
		}
	}

	round := func(om *OffsetMap, outBytes int64) int64 {
		om.reset()
		end, err := BuildMap(om, l.segs, firstDirty, l.active().Base(), 0)
		require.NoError(t, err)
		infos := l.infos()
		groupBytes := l.cfg.MaxBytes * int64(1+rng.IntN(4))
		spans := Group(infos, end, groupBytes, 0)
		if len(spans) > 0 {
			// Tombstones in the groups are copied now, if they survive.
			covered := infos[spans[len(spans)-1].End-1].Next
			for off, w := range md.recs {
				if w.key != nil && w.value == nil && off < covered {
					if _, ok := md.firstSeen[off]; !ok {
						md.firstSeen[off] = now.UnixMilli()
					}
				}
			}
		}
		create := l.creator(outBytes)
		var segs = l.segs[:0:0]
		for _, g := range spans {
			out, st, err := Clean(l.segs[g.Start:g.End], create, Round{Config: cfg, Map: om, End: end, Now: now})
			require.NoError(t, err)
			require.Equal(t, st.RecordsRead, st.RecordsWritten+st.Superseded+st.Keyless+st.TombstonesExpired)
			for _, s := range l.segs[g.Start:g.End] {
				require.NoError(t, s.Close())
			}
			segs = append(segs, out...)
		}
		if len(spans) > 0 {
			l.segs = append(segs, l.segs[spans[len(spans)-1].End:]...)
		}
		check(t, l, md, end, now, retention)
		return end
	}

	for range 25 {
		for range rng.IntN(25) {
			write()
			if rng.IntN(12) == 0 {
				l.roll()
			}
		}
		now = now.Add(time.Duration(rng.Int64N(int64(40 * time.Minute))))
		if rng.IntN(3) == 0 {
			// Land on a tombstone's horizon, or just before it.
			for _, off := range slices.Sorted(maps.Keys(md.firstSeen)) {
				if at := time.UnixMilli(md.firstSeen[off] + retention.Milliseconds() - rng.Int64N(2)); at.After(now) {
					now = at
					break
				}
			}
		}
		l.now = now
		budget := 1 << 20
		if rng.IntN(3) == 0 {
			budget = 200 + rng.IntN(1000) // a few keys: partial maps
		}
		outBytes := int64(64 << 10)
		if rng.IntN(4) == 0 {
			outBytes = 300 + int64(rng.IntN(2000)) // split outputs
		}
		firstDirty = round(NewOffsetMap(budget, nil), outBytes)
	}

	// Roll, let every tombstone's horizon pass and clean until the whole
	// log is clean: only the latest value of every live key remains.
	l.roll()
	for range 2 {
		now = now.Add(2 * retention)
		for {
			firstDirty = round(NewOffsetMap(1<<20, nil), 64<<10)
			if firstDirty == l.active().Base() {
				break
			}
		}
	}
	var want []int64
	for _, off := range md.latest {
		if md.recs[off].value != nil {
			want = append(want, off)
		}
	}
	slices.Sort(want)
	var got []int64
	for _, r := range records(readSegs(t, l.segs)) {
		got = append(got, r.Offset)
	}
	require.Equal(t, want, got)
}

// check compares the log with the model after a round that ended at end.
func check(t *testing.T, l *testLog, md *model, end int64, now time.Time, retention time.Duration) {
	t.Helper()
	present := map[int64]bool{}
	perKey := map[string]int{}
	prev := int64(-1)
	for _, b := range readSegs(t, l.segs) {
		last, ok := md.batches[b.h.BaseOffset]
		require.True(t, ok, "batch at %d was never written", b.h.BaseOffset)
		require.Equal(t, last, b.h.LastOffset(), "batch at %d", b.h.BaseOffset)
		require.Greater(t, b.h.BaseOffset, prev)
		for _, r := range b.recs {
			require.Greater(t, r.Offset, prev, "offsets rise")
			prev = r.Offset
			w := md.recs[r.Offset]
			require.Equal(t, w.key, r.Key, "offset %d", r.Offset)
			require.Equal(t, w.value, r.Value, "offset %d", r.Offset)
			require.Equal(t, w.ts, r.Timestamp.UnixMilli(), "offset %d", r.Offset)
			require.Equal(t, w.headers, headersString(r.Headers), "offset %d", r.Offset)
			present[r.Offset] = true
			if r.Offset < end {
				require.NotNil(t, r.Key, "key-less record below the end at %d", r.Offset)
				perKey[string(r.Key)]++
				require.Equal(t, 1, perKey[string(r.Key)], "two records of key %q below the end", r.Key)
			}
			if r.Key != nil && r.Value == nil && b.h.HasDeleteHorizon() {
				seen, ok := md.firstSeen[r.Offset]
				require.True(t, ok)
				require.Equal(t, seen+retention.Milliseconds(), b.h.BaseTimestamp, "horizon of %d", r.Offset)
			}
		}
		prev = max(prev, b.h.LastOffset())
	}
	for off := range md.recs {
		if off >= end {
			require.True(t, present[off], "record %d beyond the map is gone", off)
		}
	}
	for key, off := range md.latest {
		if present[off] {
			continue
		}
		w := md.recs[off]
		require.Nil(t, w.value, "latest value of %q at %d is gone", key, off)
		seen, ok := md.firstSeen[off]
		require.True(t, ok, "tombstone %d dropped before it was copied", off)
		require.GreaterOrEqual(t, now.UnixMilli(), seen+retention.Milliseconds(), "tombstone %d dropped before its horizon", off)
		require.Zero(t, perKey[key], "key %q deleted but an older record remains", key)
	}
}
