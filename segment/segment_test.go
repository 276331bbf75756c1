package segment

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"

	"github.com/stratalog/strata/log"
)

func TestFileName(t *testing.T) {
	tests := []struct {
		name   string
		base   int64
		suffix string
		want   string
	}{
		{"zero", 0, LogSuffix, "00000000000000000000.log"},
		{"kafka example", 368769, IndexSuffix, "00000000000000368769.index"},
		{"max", math.MaxInt64, TimeIndexSuffix, "09223372036854775807.timeindex"},
		{"temporary suffix", 42, LogSuffix + SwapSuffix, "00000000000000000042.log.swap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FileName(tt.base, tt.suffix)
			require.Equal(t, tt.want, got)
			base, suffix, err := ParseFileName(got)
			require.NoError(t, err)
			require.Equal(t, tt.base, base)
			require.Equal(t, tt.suffix, suffix)
		})
	}
}

func TestParseFileNameRejects(t *testing.T) {
	for _, name := range []string{"", ".log", "123.log", "0000000000000000000x.log", "00000000000000000000",
		"99999999999999999999.log", "-0000000000000000001.log", "../00000000000000000000.log"} {
		_, _, err := ParseFileName(name)
		require.ErrorIs(t, err, ErrBadName, "name %q", name)
	}
}

func TestAppendReadRoundTrip(t *testing.T) {
	shapes := []struct {
		name                          string
		batches, maxRecords, maxValue int
		interval                      int
	}{
		{"single records", 300, 1, 100, 0},
		{"small batches", 100, 20, 300, 0},
		{"large batches", 20, 200, 2000, 0},
		{"dense index", 100, 5, 100, 64},
		{"empty values", 50, 10, 0, 0},
	}
	eachFS(t, func(t *testing.T, fx fixture) {
		for i, sh := range shapes {
			t.Run(sh.name, func(t *testing.T) {
				base := int64(i * 1_000_000)
				cfg := Config{MaxBytes: testMaxBytes, IndexIntervalBytes: sh.interval}
				s, err := Create(fx.fsys, fx.dir, base, cfg)
				require.NoError(t, err)
				r := rand.New(rand.NewPCG(uint64(i), 1))
				written := appendRandom(t, s, r, sh.batches, sh.maxRecords, sh.maxValue)
				require.Equal(t, int64(len(concat(written))), s.Size())
				check := func(s *Segment) {
					for _, budget := range []int{1, 4096, 1 << 20} {
						requireRecords(t, written, base, readAll(t, s, base, budget))
					}
					for range 50 {
						from := base + r.Int64N(s.NextOffset()-base)
						requireRecords(t, written, from, readAll(t, s, from, 1+r.IntN(50_000)))
					}
				}
				check(s)

				// A clean close and reopen trusts the files and sees the same.
				offsets, times := indexEntries(s)
				next, maxTS := s.NextOffset(), s.MaxTimestamp()
				require.NoError(t, s.Close())
				for _, writable := range []bool{false, true} {
					s, err = Open(fx.fsys, fx.dir, base, cfg, writable)
					require.NoError(t, err)
					require.Equal(t, next, s.NextOffset())
					require.Equal(t, maxTS, s.MaxTimestamp())
					o2, t2 := indexEntries(s)
					require.Equal(t, offsets, o2)
					require.Len(t, t2, len(times)+boolInt(len(times) == 0 || times[len(times)-1][0] != maxTS))
					check(s)
					require.NoError(t, s.Close())
				}

				// Recovery rebuilds the same indexes from the log alone.
				s, err = Open(fx.fsys, fx.dir, base, cfg, true)
				require.NoError(t, err)
				rec, err := s.Recover()
				require.NoError(t, err)
				require.Equal(t, int64(0), rec.Truncated)
				require.NoError(t, rec.Reason)
				require.Equal(t, len(written), rec.Batches)
				require.Equal(t, next, s.NextOffset())
				o3, _ := indexEntries(s)
				require.Equal(t, offsets, o3)
				check(s)
				require.NoError(t, s.Close())
			})
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestIndexPerBatchNotPerAppend(t *testing.T) {
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: testMaxBytes})
	require.NoError(t, err)
	// One append call carrying 100 batches of about 1 KiB: Kafka before 4.0
	// would index it once; Strata indexes every batch past the interval.
	var all []byte
	var next int64
	for range 100 {
		recs := makeRecords(next, 10, 90, 1000)
		all = append(all, encode(t, recs)...)
		next += 10
	}
	require.NoError(t, s.Append(all))
	offsets, _ := s.IndexEntries()
	batch := len(all) / 100
	require.GreaterOrEqual(t, offsets, len(all)/(4096+batch)-1)
	require.LessOrEqual(t, offsets, len(all)/4096)
	for i := range offsets {
		o, p := s.offsets.Entry(i)
		h, err := log.ReadHeader(all[p:])
		require.NoError(t, err)
		require.Equal(t, o, h.LastOffset(), "entry %d names the last offset of the batch it points at", i)
	}
}

func TestAppendRejectsBadInput(t *testing.T) {
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 100, Config{MaxBytes: testMaxBytes})
	require.NoError(t, err)
	good := encode(t, makeRecords(100, 3, 10, 1))
	require.NoError(t, s.Append(good))

	tests := []struct {
		name  string
		bytes []byte
		want  error
	}{
		{"empty", nil, ErrInvalidBatch},
		{"garbage", []byte("not a batch at all, really not a batch at all, not at all, no"), ErrInvalidBatch},
		{"torn", encode(t, makeRecords(103, 3, 10, 1))[:70], ErrInvalidBatch},
		{"offset gap", encode(t, makeRecords(104, 3, 10, 1)), ErrInvalidBatch},
		{"offset repeated", encode(t, makeRecords(102, 3, 10, 1)), ErrInvalidBatch},
		{"second batch misplaced", append(encode(t, makeRecords(103, 1, 10, 1)), encode(t, makeRecords(110, 1, 10, 1))...), ErrInvalidBatch},
		{"relative offset overflow", encode(t, makeRecords(103+math.MaxInt32, 1, 1, 1)), ErrInvalidBatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Append(tt.bytes)
			require.ErrorIs(t, err, tt.want)
			require.Equal(t, int64(103), s.NextOffset(), "a refused append changes nothing")
			require.Equal(t, int64(len(good)), s.Size())
		})
	}
	requireRecords(t, []writtenBatch{{good, makeRecords(100, 3, 10, 1)}}, 100, readAll(t, s, 100, 1<<20))
}

func TestAppendRefusesOverflowingRelativeOffset(t *testing.T) {
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: testMaxBytes, AllowGaps: true})
	require.NoError(t, err)
	require.NoError(t, s.Append(encode(t, makeRecords(0, 1, 1, 1))))
	far := encode(t, makeRecords(math.MaxInt32+1, 1, 1, 1))
	require.ErrorIs(t, s.Append(far), ErrFull)
	require.True(t, s.CanAppendOffset(math.MaxInt32))
	require.False(t, s.CanAppendOffset(math.MaxInt32+1))
	require.Equal(t, int64(1), s.NextOffset())
}

func TestAppendRefusesWhenIndexFull(t *testing.T) {
	fx, _ := memFixture(t)
	// Room for 4 offset entries and 2 time entries (one reserved for Seal).
	s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 1, MaxIndexBytes: 32})
	require.NoError(t, err)
	appended := 0
	for {
		err := s.Append(encode(t, makeRecords(s.NextOffset(), 1, 10, int64(appended))))
		if err != nil {
			require.ErrorIs(t, err, ErrFull)
			break
		}
		appended++
		require.Less(t, appended, 100)
	}
	require.True(t, s.IndexFull())
	o, ts := s.IndexEntries()
	require.LessOrEqual(t, o, 4)
	require.LessOrEqual(t, ts, 2)
	require.Equal(t, int64(appended), s.NextOffset())
	require.NoError(t, s.Seal())
	_, ts = s.IndexEntries()
	require.LessOrEqual(t, ts, 3, "Seal uses the reserved slot")
}

func TestSealedRefusesAppendAndKeepsReading(t *testing.T) {
	eachFS(t, func(t *testing.T, fx fixture) {
		s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 100})
		require.NoError(t, err)
		written := appendRandom(t, s, rand.New(rand.NewPCG(3, 3)), 50, 10, 100)
		require.NoError(t, s.Seal())
		require.ErrorIs(t, s.Append(encode(t, makeRecords(s.NextOffset(), 1, 1, 1))), ErrSealed)
		requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))
		require.NoError(t, s.Sync())
		require.NoError(t, s.Close())
		_, err = s.Read(nil, 0, 1)
		require.ErrorIs(t, err, ErrClosed)
	})
}

func TestReadPastEndAndBelowBase(t *testing.T) {
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 50, Config{MaxBytes: testMaxBytes})
	require.NoError(t, err)
	got, err := s.Read(nil, 50, 100)
	require.NoError(t, err)
	require.Empty(t, got, "an empty segment returns nothing")
	written := appendRandom(t, s, rand.New(rand.NewPCG(1, 1)), 5, 5, 10)
	got, err = s.Read(nil, s.NextOffset(), 100)
	require.NoError(t, err)
	require.Empty(t, got)
	requireRecords(t, written, 50, readAll(t, s, 0, 100))
}

func TestReadGivesAtLeastOneBatch(t *testing.T) {
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: testMaxBytes})
	require.NoError(t, err)
	big := encode(t, makeRecords(0, 10, 10_000, 1))
	require.NoError(t, s.Append(big))
	require.NoError(t, s.Append(encode(t, makeRecords(10, 1, 1, 1))))
	got, err := s.Read(nil, 5, 10)
	require.NoError(t, err)
	require.Equal(t, big, got, "a budget below the first batch still returns it whole")
	got, err = s.Read(nil, 0, len(big)+10)
	require.NoError(t, err)
	require.Equal(t, big, got, "the budget ends inside the second batch")
}

func TestFindOffsetByTimestamp(t *testing.T) {
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 200})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(9, 9))
	type stamp struct{ off, ts int64 }
	var all []stamp
	for range 200 {
		n := 1 + r.IntN(5)
		recs := makeRecords(s.NextOffset(), n, 20, 0)
		for i := range recs {
			// Mostly rising, sometimes going back (CreateTime need not rise).
			ts := int64(len(all))*10 + r.Int64N(40)
			recs[i].Timestamp = time.UnixMilli(ts)
			all = append(all, stamp{recs[i].Offset, ts})
		}
		require.NoError(t, s.Append(encode(t, recs)))
	}
	for _, target := range []int64{-100, 0, 5, 17, 500, 999, 1000, 1500, 1990, 2010, 5000} {
		for _, start := range []int64{0, 100, 400} {
			wantOff, wantTS, wantFound := int64(-1), int64(-1), false
			for _, st := range all {
				if st.off >= start && st.ts >= target {
					wantOff, wantTS, wantFound = st.off, st.ts, true
					break
				}
			}
			off, ts, found, err := s.FindOffsetByTimestamp(target, start, math.MaxInt64, &log.Decoder{})
			require.NoError(t, err)
			require.Equal(t, wantFound, found, "ts %d from %d", target, start)
			require.Equal(t, wantOff, off, "ts %d from %d", target, start)
			require.Equal(t, wantTS, ts, "ts %d from %d", target, start)
		}
	}
}

func TestTruncate(t *testing.T) {
	eachFS(t, func(t *testing.T, fx fixture) {
		r := rand.New(rand.NewPCG(5, 5))
		for round := range 20 {
			base := int64(round * 10_000)
			s, err := Create(fx.fsys, fx.dir, base, Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 300})
			require.NoError(t, err)
			written := appendRandom(t, s, r, 60, 6, 80)
			to := base + r.Int64N(s.NextOffset()-base+1)
			require.NoError(t, s.truncate(to))

			// The segment now ends at the batch boundary at or below to.
			var kept []writtenBatch
			for _, b := range written {
				if b.recs[len(b.recs)-1].Offset < to {
					kept = append(kept, b)
				}
			}
			wantNext := base
			if len(kept) > 0 {
				wantNext = kept[len(kept)-1].recs[len(kept[len(kept)-1].recs)-1].Offset + 1
			}
			require.Equal(t, wantNext, s.NextOffset())
			require.Equal(t, int64(len(concat(kept))), s.Size())
			requireRecords(t, kept, base, readAll(t, s, base, 1<<20))

			// The truncated segment equals one built from the kept batches.
			freshDir := filepath.Join(fx.dir, fmt.Sprint("fresh-", round))
			require.NoError(t, fx.fsys.MkdirAll(freshDir, 0o755))
			fresh, err := Create(fx.fsys, freshDir, base, Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 300})
			require.NoError(t, err)
			for _, b := range kept {
				require.NoError(t, fresh.Append(b.bytes))
			}
			o1, t1 := indexEntries(s)
			o2, t2 := indexEntries(fresh)
			require.Equal(t, o2, o1)
			require.Equal(t, t2, t1)
			require.Equal(t, fresh.MaxTimestamp(), s.MaxTimestamp())

			// And it takes appends again.
			more := appendRandom(t, s, r, 5, 3, 10)
			requireRecords(t, append(kept, more...), base, readAll(t, s, base, 1<<20))
			require.NoError(t, s.Delete())
			require.NoError(t, fresh.Delete())
		}
	})
}

// TestDelete marks a segment deleted and deletes it: with its index files,
// and without them (a segment smaller than an index interval has none).
func TestDelete(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		files []string
	}{
		{"indexed", Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 64}, []string{FileName(7, IndexSuffix), FileName(7, LogSuffix), FileName(7, TimeIndexSuffix)}},
		{"small", Config{MaxBytes: testMaxBytes}, []string{FileName(7, LogSuffix)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachFS(t, func(t *testing.T, fx fixture) {
				s, err := Create(fx.fsys, fx.dir, 7, tc.cfg)
				require.NoError(t, err)
				appendRandom(t, s, rand.New(rand.NewPCG(1, 2)), 3, 3, 3)
				names, err := fx.fsys.ReadDir(fx.dir)
				require.NoError(t, err)
				require.Equal(t, tc.files, names)
				require.NoError(t, s.MarkDeleted())
				names, err = fx.fsys.ReadDir(fx.dir)
				require.NoError(t, err)
				require.Len(t, names, len(tc.files))
				for _, n := range names {
					require.Contains(t, n, DeletedSuffix)
				}
				_, err = s.Read(nil, 7, 100)
				require.NoError(t, err, "a segment marked deleted still reads")
				require.NoError(t, s.Delete())
				names, err = fx.fsys.ReadDir(fx.dir)
				require.NoError(t, err)
				require.Empty(t, names)
			})
		})
	}
}

// TestDeleteTemp deletes a segment made by CreateTemp beside a live segment
// of the same base offset, as a failed compaction does with its output: only
// the temporary files go.
func TestDeleteTemp(t *testing.T) {
	eachFS(t, func(t *testing.T, fx fixture) {
		cfg := Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 64}
		live, err := Create(fx.fsys, fx.dir, 7, cfg)
		require.NoError(t, err)
		appendRandom(t, live, rand.New(rand.NewPCG(1, 2)), 3, 3, 3)
		liveNames, err := fx.fsys.ReadDir(fx.dir)
		require.NoError(t, err)

		tmp, err := CreateTemp(fx.fsys, fx.dir, 7, CleanedSuffix, cfg)
		require.NoError(t, err)
		appendRandom(t, tmp, rand.New(rand.NewPCG(1, 2)), 3, 3, 3)
		require.NoError(t, tmp.MarkDeleted())
		names, err := fx.fsys.ReadDir(fx.dir)
		require.NoError(t, err)
		for _, kind := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
			require.Contains(t, names, FileName(7, kind)+CleanedSuffix+DeletedSuffix)
			require.Contains(t, names, FileName(7, kind), "the live segment keeps its names")
		}
		require.NoError(t, tmp.Delete())
		names, err = fx.fsys.ReadDir(fx.dir)
		require.NoError(t, err)
		require.Equal(t, liveNames, names)
		require.NoError(t, live.Close())
	})
}

// TestFailedRewriteLeavesNoFiles fails a Rewrite at its fsync: the error is
// returned, the segment's own files are untouched, and the .cleaned output is
// removed.
func TestFailedRewriteLeavesNoFiles(t *testing.T) {
	fx, m := memFixture(t)
	cfg := Config{MaxBytes: testMaxBytes}
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(3, 3)), 6, 3, 50)
	before, err := fx.fsys.ReadDir(fx.dir)
	require.NoError(t, err)
	m.SetInjector(vfs.FailOnce(vfs.OpSync, LogSuffix+CleanedSuffix))
	_, err = s.Rewrite(written[3].recs[0].Offset, nil)
	require.ErrorIs(t, err, vfs.ErrInjected)
	m.SetInjector(nil)
	after, err := fx.fsys.ReadDir(fx.dir)
	require.NoError(t, err)
	require.Equal(t, before, after, "no .cleaned files left behind")
	requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))
	require.NoError(t, s.Close())
}

// TestFailedCreateLeavesNoFiles fails a Create at each step that can fail
// once the files exist: it returns the error, leaves no file of the
// segment behind, and a failed directory fsync is ErrSync.
func TestFailedCreateLeavesNoFiles(t *testing.T) {
	tests := []struct {
		name   string
		inject func(m *vfs.Mem)
		want   []error
	}{
		{"log preallocation on a full disk", func(m *vfs.Mem) { m.SetDiskLimit(m.DiskUsage() + 100) }, []error{syscall.ENOSPC}},
		{"directory fsync", func(m *vfs.Mem) { m.SetInjector(vfs.FailOnce(vfs.OpSyncDir, "")) }, []error{ErrSync, vfs.ErrInjected}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx, m := memFixture(t)
			tt.inject(m)
			_, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: 1 << 20, Preallocate: true})
			for _, want := range tt.want {
				require.ErrorIs(t, err, want)
			}
			names, err := fx.fsys.ReadDir(fx.dir)
			require.NoError(t, err)
			require.Empty(t, names)
			m.SetInjector(nil)
			m.SetDiskLimit(-1)
			s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: 1 << 20, Preallocate: true})
			require.NoError(t, err, "the next Create works")
			require.NoError(t, s.Close())
		})
	}
}

// TestVerifiedPrefix: appended and recovered batches need no CRC on read; a
// reopened segment checks each batch once, extending the verified prefix.
func TestVerifiedPrefix(t *testing.T) {
	fx, _ := memFixture(t)
	cfg := Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 300}
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(6, 6)), 30, 5, 100)
	require.Equal(t, s.Size(), s.verified.Load(), "appended bytes are known good")
	require.NoError(t, s.Close())

	s, err = Open(fx.fsys, fx.dir, 0, cfg, false)
	require.NoError(t, err)
	require.Zero(t, s.verified.Load(), "a reopened file is checked afresh")
	mid := written[10].recs[0].Offset
	requireRecords(t, written, mid, readAll(t, s, mid, 1<<20))
	require.Zero(t, s.verified.Load(), "a read that does not start at the prefix leaves it")
	var pos int64
	for i, b := range written {
		end := pos + int64(len(b.bytes))
		require.Equal(t, i >= 10 && i < len(written)-1, s.marks.has(pos), "batch %d at %d: marked once checked past the prefix", i, pos)
		require.Equal(t, i == len(written)-1, s.tail.holds(pos, end), "batch %d at %d: the last one joins the verified tail instead", i, pos)
		pos = end
	}
	requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))
	require.Equal(t, s.Size(), s.verified.Load(), "reading from the start extends it to the end")
	require.NoError(t, s.Close())
}

// TestMarksDoNotHideDamage reopens a segment, reads one batch at random (it
// is marked checked), then damages another: reading it still fails. After a
// truncation the marks are forgotten, so a batch appended where a marked one
// was gets its own check.
func TestMarksDoNotHideDamage(t *testing.T) {
	fx, _ := memFixture(t)
	cfg := Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 300}
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(7, 7)), 30, 5, 100)
	require.NoError(t, s.Close())

	s, err = Open(fx.fsys, fx.dir, 0, cfg, true)
	require.NoError(t, err)
	var pos []int64
	var p int64
	for _, b := range written {
		pos = append(pos, p)
		p += int64(len(b.bytes))
	}
	_, err = s.Read(nil, written[20].recs[0].Offset, 1)
	require.NoError(t, err)
	require.True(t, s.marks.has(pos[20]))
	s.data[pos[25]+int64(len(written[25].bytes))-1] ^= 0xff // the last byte of batch 25
	_, err = s.Read(nil, written[25].recs[0].Offset, 1)
	require.ErrorIs(t, err, ErrCorrupt)
	s.data[pos[25]+int64(len(written[25].bytes))-1] ^= 0xff

	require.NoError(t, s.truncate(written[20].recs[0].Offset))
	require.False(t, s.marks.has(pos[20]), "Truncate forgets the marks")
	recs := makeRecords(written[20].recs[0].Offset, 3, 10, 1)
	require.NoError(t, s.Append(encode(t, recs)))
	require.False(t, s.marks.has(pos[20]), "an append past an unverified prefix marks nothing…")
	require.True(t, s.tail.holds(pos[20], s.Size()), "… it extends the verified tail, which Truncate left at the cut")
	requireRecords(t, append(written[:20:20], writtenBatch{encode(t, recs), recs}), 0, readAll(t, s, 0, 1<<20))
	require.NoError(t, s.Close())
}

// TestBatchMarks sets marks from several goroutines at once (run with -race)
// across chunks, and checks each is seen and no other.
func TestBatchMarks(t *testing.T) {
	var m batchMarks
	const size = 5 << chunkShift
	require.False(t, m.has(0))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for pos := int64(g) * 96; pos < size; pos += 4 * 96 {
				m.set(pos, size)
			}
		})
	}
	wg.Wait()
	for pos := int64(0); pos < size; pos += 32 {
		require.Equal(t, pos%96 == 0, m.has(pos), "block at %d", pos)
	}
	require.False(t, m.has(size+1<<chunkShift), "past the mapping")
	m.reset()
	require.False(t, m.has(0))
}

// TestDamagedIndexEntry damages the position of each middle entry of a
// trusted offset index in turn (only the ends are shape-checked on Open):
// reads of every offset return the right records or ErrCorrupt, never a
// panic and never other records.
func TestDamagedIndexEntry(t *testing.T) {
	cfg := Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 256}
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	var written []writtenBatch
	for off := int64(0); off < 120; off++ {
		recs := makeRecords(off, 1, 100, 1000)
		b := encode(t, recs)
		require.NoError(t, s.Append(b))
		written = append(written, writtenBatch{b, recs})
	}
	entries, _ := s.IndexEntries()
	require.Greater(t, entries, 8)
	require.NoError(t, s.Close())
	path := filepath.Join(fx.dir, FileName(0, IndexSuffix))
	f, err := fx.fsys.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	orig := make([]byte, 4)
	for e := 1; e < entries-1; e++ {
		_, err := f.ReadAt(orig, int64(e*8+4))
		require.NoError(t, err)
		for _, bad := range []uint32{0, 1, uint32(binary.BigEndian.Uint32(orig) - 1), 0x7fffffff, 0xffffffff} {
			_, err := f.WriteAt(binary.BigEndian.AppendUint32(nil, bad), int64(e*8+4))
			require.NoError(t, err)
			s, err := Open(fx.fsys, fx.dir, 0, cfg, false)
			require.NoError(t, err)
			for off := range int64(len(written)) {
				got, err := s.Read(nil, off, 1)
				if err != nil {
					require.ErrorIs(t, err, ErrCorrupt, "entry %d position %d, offset %d", e, bad, off)
					continue
				}
				require.Equal(t, written[off].bytes, got[:min(len(got), len(written[off].bytes))], "entry %d position %d, offset %d", e, bad, off)
			}
			require.NoError(t, s.Close())
		}
		_, err = f.WriteAt(orig, int64(e*8+4))
		require.NoError(t, err)
	}
}
