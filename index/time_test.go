package index

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stratalog/strata/vfs"
	"github.com/stretchr/testify/require"
)

// openTime opens a time index and closes it when the test ends.
func openTime(t testing.TB, fsys vfs.FS, path string, base int64, maxBytes int, writable bool) *Time {
	t.Helper()
	x, err := OpenTime(fsys, path, base, maxBytes, writable)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, x.Close()) })
	return x
}

// timeEntry is a time index entry in a test model.
type timeEntry struct {
	timestamp int64
	offset    int64
}

// timeEntries returns x's entries.
func timeEntries(x *Time) []timeEntry {
	es := []timeEntry{}
	for i := range x.Entries() {
		ts, o := x.Entry(i)
		es = append(es, timeEntry{ts, o})
	}
	return es
}

// randomTimeEntries returns n entries with strictly increasing timestamps
// and non-decreasing offsets above base.
func randomTimeEntries(r *rand.Rand, base int64, n int) []timeEntry {
	es := make([]timeEntry, n)
	ts, o := 1_700_000_000_000+r.Int64N(1000), base
	for i := range es {
		ts += 1 + r.Int64N(1000)
		o += r.Int64N(3) // repeats offsets now and then
		es[i] = timeEntry{ts, o}
	}
	return es
}

// bruteTimeLookup is Time.Lookup by a linear scan of the model.
func bruteTimeLookup(es []timeEntry, base, ts int64) (int64, int64) {
	out := timeEntry{NoTimestamp, base}
	for _, e := range es {
		if e.timestamp <= ts {
			out = e
		}
	}
	return out.timestamp, out.offset
}

func TestTimeLookup(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		const base = 500
		empty := openTime(t, fsys, filepath.Join(dir, "empty.timeindex"), base, 0, true)
		x := openTime(t, fsys, filepath.Join(dir, "a.timeindex"), base, 0, true)
		for _, e := range []timeEntry{{1000, 510}, {2000, 520}, {3000, 520}} {
			require.NoError(t, x.MaybeAppend(e.timestamp, e.offset, false))
		}
		tests := []struct {
			name   string
			x      *Time
			ts     int64
			wantTs int64
			wantO  int64
		}{
			{"empty", empty, 1000, NoTimestamp, base},
			{"min int64", x, math.MinInt64, NoTimestamp, base},
			{"before first", x, 999, NoTimestamp, base},
			{"first", x, 1000, 1000, 510},
			{"between", x, 1500, 1000, 510},
			{"second", x, 2000, 2000, 520},
			{"last", x, 3000, 3000, 520},
			{"after last", x, 3001, 3000, 520},
			{"max int64", x, math.MaxInt64, 3000, 520},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ts, o := tt.x.Lookup(tt.ts)
				require.Equal(t, timeEntry{tt.wantTs, tt.wantO}, timeEntry{ts, o})
			})
		}
		ts, o := empty.LastEntry()
		require.Equal(t, timeEntry{NoTimestamp, base}, timeEntry{ts, o})
		ts, o = x.LastEntry()
		require.Equal(t, timeEntry{3000, 520}, timeEntry{ts, o})
	})
}

func TestTimeLookupModel(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		// Sizes around the warm tail (682 entries + the hot entry).
		for _, n := range []int{1, 2, 100, 682, 683, 684, 685, 1365, 3000} {
			r := rand.New(rand.NewPCG(uint64(n), 2))
			base := r.Int64N(1 << 40)
			es := randomTimeEntries(r, base, n)
			path := filepath.Join(dir, fmt.Sprintf("model-%d.timeindex", n))
			x := openTime(t, fsys, path, base, n*TimeEntrySize, true)
			for _, e := range es {
				require.NoError(t, x.MaybeAppend(e.timestamp, e.offset, true))
			}
			require.NoError(t, x.Check())
			require.Equal(t, es, timeEntries(x))
			var targets []int64
			for _, i := range nearEdges(n, 682) {
				targets = append(targets, es[i].timestamp-1, es[i].timestamp, es[i].timestamp+1)
			}
			for range 1000 {
				targets = append(targets, es[0].timestamp-5+r.Int64N(es[n-1].timestamp-es[0].timestamp+10))
			}
			for _, target := range targets {
				wantTs, wantO := bruteTimeLookup(es, base, target)
				if ts, o := x.Lookup(target); ts != wantTs || o != wantO {
					t.Fatalf("n=%d: Lookup(%d) = (%d, %d), want (%d, %d)", n, target, ts, o, wantTs, wantO)
				}
			}
			// TruncateTo against the model, offsets repeating.
			for range 50 {
				cut := base + r.Int64N(es[n-1].offset-base+2)
				want := 0
				for want < n && es[want].offset < cut {
					want++
				}
				require.Equal(t, want, ceil(x.m.data, n, timeValue, cut-base), "n=%d cut=%d", n, cut)
			}
		}
	})
}

func TestTimeMaybeAppend(t *testing.T) {
	const base = 100
	tests := []struct {
		name    string
		prefill []timeEntry
		ts      int64
		offset  int64
		want    error
		added   bool
	}{
		{"first", nil, 1000, 100, nil, true},
		{"first, no timestamp", nil, NoTimestamp, 100, nil, true},
		{"larger timestamp", []timeEntry{{1000, 110}}, 1001, 111, nil, true},
		{"larger timestamp, same offset", []timeEntry{{1000, 110}}, 1001, 110, nil, true},
		{"equal timestamp ignored", []timeEntry{{1000, 110}}, 1000, 120, nil, false},
		{"smaller timestamp ignored", []timeEntry{{1000, 110}}, 999, 120, nil, false},
		{"offset below last", []timeEntry{{1000, 110}}, 2000, 109, ErrOutOfOrder, false},
		{"offset below last, timestamp ignored", []timeEntry{{1000, 110}}, 1000, 109, ErrOutOfOrder, false},
		{"offset below base", nil, 1000, 99, ErrOffsetOverflow, false},
		{"relative offset overflow", nil, 1000, base + math.MaxInt32 + 1, ErrOffsetOverflow, false},
		{"largest relative offset", nil, 1000, base + math.MaxInt32, nil, true},
	}
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				x := openTime(t, fsys, filepath.Join(dir, filepathFor(i, "timeindex")), base, 0, true)
				for _, e := range tt.prefill {
					require.NoError(t, x.MaybeAppend(e.timestamp, e.offset, false))
				}
				err := x.MaybeAppend(tt.ts, tt.offset, false)
				if tt.want != nil {
					require.ErrorIs(t, err, tt.want)
				} else {
					require.NoError(t, err)
				}
				want := append([]timeEntry{}, tt.prefill...)
				if tt.added {
					want = append(want, timeEntry{tt.ts, tt.offset})
				}
				require.Equal(t, want, timeEntries(x))
			})
		}
	})
}

// TestTimeFull checks that the last slot is reserved for the roll entry.
func TestTimeFull(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		x := openTime(t, fsys, filepath.Join(dir, "a.timeindex"), 0, 3*TimeEntrySize+5, true)
		require.Equal(t, 3, x.MaxEntries())
		require.False(t, x.Full())
		require.NoError(t, x.MaybeAppend(10, 1, false))
		require.False(t, x.Full())
		require.NoError(t, x.MaybeAppend(20, 2, false))
		require.True(t, x.Full(), "two of three slots used: only the reserved one is left")
		require.ErrorIs(t, x.MaybeAppend(30, 3, false), ErrFull)
		require.NoError(t, x.MaybeAppend(20, 3, false), "an ignored timestamp is no append, so not full")
		require.NoError(t, x.MaybeAppend(30, 3, true), "the roll entry takes the reserved slot")
		require.ErrorIs(t, x.MaybeAppend(40, 4, true), ErrFull, "no slot at all")
		require.NoError(t, x.MaybeAppend(30, 4, true), "re-appending the roll entry on close is a no-op")
		require.Equal(t, []timeEntry{{10, 1}, {20, 2}, {30, 3}}, timeEntries(x))

		require.NoError(t, x.Trim())
		require.ErrorIs(t, x.MaybeAppend(40, 4, true), ErrSealed)
		require.True(t, x.Full())
	})
}

func TestTimeTruncateTo(t *testing.T) {
	const base = 1000
	entries := []timeEntry{{100, 1010}, {200, 1020}, {300, 1020}, {400, 1030}}
	tests := []struct {
		name   string
		offset int64
		want   int
	}{
		{"below base", 3, 0},
		{"base", base, 0},
		{"first exactly", 1010, 0},
		{"between", 1011, 1},
		{"repeated offset exactly", 1020, 1},
		{"after repeated offset", 1021, 3},
		{"last exactly", 1030, 3},
		{"after last", 1031, 4},
		{"beyond the relative range", math.MaxInt64, 4},
	}
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				x := openTime(t, fsys, filepath.Join(dir, filepathFor(i, "timeindex")), base, 0, true)
				for _, e := range entries {
					require.NoError(t, x.MaybeAppend(e.timestamp, e.offset, false))
				}
				x.TruncateTo(tt.offset)
				require.Equal(t, entries[:tt.want], timeEntries(x))
				require.NoError(t, x.MaybeAppend(500, 1040, false))
				require.Equal(t, tt.want+1, x.Entries())
			})
		}
	})
}

func TestTimeResetTrimReopen(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		const base, maxBytes = 42, 1200 * TimeEntrySize
		path := filepath.Join(dir, "00000000000000000042.timeindex")
		es := randomTimeEntries(rand.New(rand.NewPCG(5, 6)), base, 1000)

		x, err := OpenTime(fsys, path, base, maxBytes, true)
		require.NoError(t, err)
		require.Empty(t, fileBytes(t, fsys, path), "not extended before an entry needs it")
		for _, e := range es {
			require.NoError(t, x.MaybeAppend(e.timestamp, e.offset, false))
		}
		x.Reset()
		require.Zero(t, x.Entries())
		ts, o := x.LastEntry()
		require.Equal(t, timeEntry{NoTimestamp, base}, timeEntry{ts, o})
		for _, e := range es {
			require.NoError(t, x.MaybeAppend(e.timestamp, e.offset, false))
		}
		require.NoError(t, x.Sync())
		require.NoError(t, x.Close())
		require.Len(t, fileBytes(t, fsys, path), len(es)*TimeEntrySize, "close trims")

		ro := openTime(t, fsys, path, base, 0, false)
		require.Equal(t, es, timeEntries(ro))
		require.NoError(t, ro.Check())
		require.ErrorIs(t, ro.MaybeAppend(math.MaxInt64, es[len(es)-1].offset, true), ErrSealed)
		require.NoError(t, ro.Close(), "a mapped file cannot grow on a Mem")

		w := openTime(t, fsys, path, base, maxBytes, true)
		require.Equal(t, es, timeEntries(w))
		require.Equal(t, maxBytes/TimeEntrySize, w.MaxEntries())
		require.NoError(t, w.MaybeAppend(math.MaxInt64, es[len(es)-1].offset, false))
		require.Equal(t, len(es)+1, w.Entries())

		t.Run("torn read-only", func(t *testing.T) {
			torn := filepath.Join(dir, "torn.timeindex")
			writeFile(t, fsys, torn, make([]byte, 2*TimeEntrySize+8))
			_, err := OpenTime(fsys, torn, 0, 0, false)
			require.ErrorIs(t, err, ErrCorrupt)
		})
	})
}

// TestTimeCrashed reopens a time index that was never trimmed.
func TestTimeCrashed(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		path := filepath.Join(dir, "live.timeindex")
		x := openTime(t, fsys, path, 0, 50*TimeEntrySize, true)
		for i := range 3 {
			require.NoError(t, x.MaybeAppend(int64(1000*(i+1)), int64(i), false))
		}
		crashed := filepath.Join(dir, "crashed.timeindex")
		writeFile(t, fsys, crashed, fileBytes(t, fsys, path))
		c := openTime(t, fsys, crashed, 0, 50*TimeEntrySize, true)
		require.Equal(t, 50, c.Entries())
		err := c.Check()
		require.ErrorIs(t, err, ErrCorrupt)
		var ce *CorruptError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, 3, ce.Entry)
		require.Equal(t, int64(3*TimeEntrySize), ce.Pos)
		c.Reset()
		require.NoError(t, c.Check())
	})
}

// putTime encodes a time index entry.
func putTime(ts int64, rel uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(nil, uint64(ts)), rel)
}

func TestTimeCheck(t *testing.T) {
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	tests := []struct {
		name  string
		file  []byte
		entry int // -1: no corruption
	}{
		{"empty", nil, -1},
		{"valid", cat(putTime(10, 1), putTime(20, 1), putTime(30, 5)), -1},
		{"negative timestamps", cat(putTime(-5, 0), putTime(-1, 0)), -1},
		{"timestamp equal", cat(putTime(10, 1), putTime(10, 2)), 1},
		{"timestamp decreasing", cat(putTime(10, 1), putTime(20, 2), putTime(15, 3)), 2},
		{"offset decreasing", cat(putTime(10, 5), putTime(20, 4)), 1},
		{"offset below base", cat(putTime(10, math.MaxUint32)), 0},
		{"zeros", make([]byte, 3*TimeEntrySize), 1},
	}
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				path := filepath.Join(dir, filepathFor(i, "timeindex"))
				writeFile(t, fsys, path, tt.file)
				x := openTime(t, fsys, path, 7, 0, false)
				err := x.Check()
				if tt.entry < 0 {
					require.NoError(t, err)
					return
				}
				require.ErrorIs(t, err, ErrCorrupt)
				var ce *CorruptError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, tt.entry, ce.Entry)
				require.Equal(t, path, ce.Path)
			})
		}
	})
}
