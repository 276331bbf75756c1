package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stratalog/strata/vfs"
	"github.com/stretchr/testify/require"
)

// openOffset opens an offset index and closes it when the test ends.
func openOffset(t testing.TB, fsys vfs.FS, path string, base int64, maxBytes int, writable bool) *Offset {
	t.Helper()
	x, err := OpenOffset(fsys, path, base, maxBytes, writable)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, x.Close()) })
	return x
}

// offsetEntry is an offset index entry in a test model.
type offsetEntry struct {
	offset   int64
	position int32
}

// offsetEntries returns x's entries.
func offsetEntries(x *Offset) []offsetEntry {
	es := []offsetEntry{}
	for i := range x.Entries() {
		o, p := x.Entry(i)
		es = append(es, offsetEntry{o, p})
	}
	return es
}

// randomOffsetEntries returns n entries above base with random gaps.
func randomOffsetEntries(r *rand.Rand, base int64, n int) []offsetEntry {
	es := make([]offsetEntry, n)
	o, p := base, int32(0)
	for i := range es {
		o += 1 + r.Int64N(20)
		p += 1 + r.Int32N(5000)
		es[i] = offsetEntry{o, p}
	}
	return es
}

// nearEdges returns the indexes of a search over n entries with a warm tail
// of warm entries that are worth probing: the first and last 64 and the 64
// on either side of the first warm entry.
func nearEdges(n, warm int) []int {
	var out []int
	hot := max(0, n-1-warm)
	for i := range n {
		if i < 64 || i >= n-64 || (i >= hot-64 && i <= hot+64) {
			out = append(out, i)
		}
	}
	return out
}

// bruteLookup is Lookup by a linear scan of the model.
func bruteLookup(es []offsetEntry, base, target int64) (int64, int32) {
	o, p := base, int32(0)
	for _, e := range es {
		if e.offset <= target {
			o, p = e.offset, e.position
		}
	}
	return o, p
}

func TestOffsetLookup(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		const base = 1000
		empty := openOffset(t, fsys, filepath.Join(dir, "empty.index"), base, 0, true)
		x := openOffset(t, fsys, filepath.Join(dir, "a.index"), base, 0, true)
		for _, e := range []offsetEntry{{1010, 100}, {1020, 200}, {1030, 300}} {
			require.NoError(t, x.Append(e.offset, e.position))
		}
		tests := []struct {
			name    string
			x       *Offset
			target  int64
			wantOff int64
			wantPos int32
		}{
			{"empty", empty, 1500, base, 0},
			{"below base", x, 5, base, 0},
			{"min int64", x, math.MinInt64, base, 0},
			{"at base", x, base, base, 0},
			{"before first", x, 1009, base, 0},
			{"first", x, 1010, 1010, 100},
			{"between first and second", x, 1015, 1010, 100},
			{"second", x, 1020, 1020, 200},
			{"just below last", x, 1029, 1020, 200},
			{"last", x, 1030, 1030, 300},
			{"after last", x, 1031, 1030, 300},
			{"max int64", x, math.MaxInt64, 1030, 300},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				o, p := tt.x.Lookup(tt.target)
				require.Equal(t, tt.wantOff, o)
				require.Equal(t, tt.wantPos, p)
			})
		}
	})
}

func TestOffsetLookupModel(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		// Sizes around the warm tail (1024 entries + the hot entry).
		for _, n := range []int{1, 2, 100, 1024, 1025, 1026, 1027, 2049, 3000} {
			r := rand.New(rand.NewPCG(uint64(n), 1))
			base := r.Int64N(1 << 40)
			es := randomOffsetEntries(r, base, n)
			x := openOffset(t, fsys, filepath.Join(dir, "model.index"), base, n*OffsetEntrySize, true)
			for _, e := range es {
				require.NoError(t, x.Append(e.offset, e.position))
			}
			require.True(t, x.Full())
			require.NoError(t, x.Check())
			require.Equal(t, es, offsetEntries(x))
			// The entries near the ends and the warm boundary, their
			// neighbours, and random targets.
			var targets []int64
			for _, i := range nearEdges(n, 1024) {
				targets = append(targets, es[i].offset-1, es[i].offset, es[i].offset+1)
			}
			for range 1000 {
				targets = append(targets, base-5+r.Int64N(es[n-1].offset-base+10))
			}
			for _, target := range targets {
				wantOff, wantPos := bruteLookup(es, base, target)
				if o, p := x.Lookup(target); o != wantOff || p != wantPos {
					t.Fatalf("n=%d: Lookup(%d) = (%d, %d), want (%d, %d)", n, target, o, p, wantOff, wantPos)
				}
				// Floor names the same entry by its slot.
				wantSlot := -1
				for i, e := range es {
					if e.offset <= target {
						wantSlot = i
					}
				}
				if slot, entries := x.Floor(target); slot != wantSlot || entries != n {
					t.Fatalf("n=%d: Floor(%d) = (%d, %d), want (%d, %d)", n, target, slot, entries, wantSlot, n)
				}
			}
			require.NoError(t, x.Close())
			require.NoError(t, fsys.Remove(filepath.Join(dir, "model.index")))
		}
	})
}

func TestOffsetLookupPosition(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		x := openOffset(t, fsys, filepath.Join(dir, "a.index"), 0, 0, true)
		for _, e := range []offsetEntry{{10, 100}, {20, 200}, {30, 300}} {
			require.NoError(t, x.Append(e.offset, e.position))
		}
		tests := []struct {
			name     string
			position int64
			want     offsetEntry
			ok       bool
		}{
			{"zero", 0, offsetEntry{10, 100}, true},
			{"first", 100, offsetEntry{10, 100}, true},
			{"between", 150, offsetEntry{20, 200}, true},
			{"last", 300, offsetEntry{30, 300}, true},
			{"after last", 301, offsetEntry{}, false},
			{"beyond int32", math.MaxInt32 + 1, offsetEntry{}, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				o, p, ok := x.lookupPosition(tt.position)
				require.Equal(t, tt.ok, ok)
				require.Equal(t, tt.want, offsetEntry{o, p})
			})
		}
	})
}

func TestOffsetAppendErrors(t *testing.T) {
	const base = 100
	tests := []struct {
		name     string
		prefill  []offsetEntry
		maxBytes int
		seal     bool
		offset   int64
		position int32
		want     error
	}{
		{"first entry at base", nil, 0, false, base, 0, nil},
		{"next entry", []offsetEntry{{110, 10}}, 0, false, 111, 11, nil},
		{"below base", nil, 0, false, base - 1, 0, ErrOffsetOverflow},
		{"min int64", nil, 0, false, math.MinInt64, 0, ErrOffsetOverflow},
		{"largest relative offset", nil, 0, false, base + math.MaxInt32, 0, nil},
		{"relative offset overflow", nil, 0, false, base + math.MaxInt32 + 1, 0, ErrOffsetOverflow},
		{"equal offset", []offsetEntry{{110, 10}}, 0, false, 110, 20, ErrOutOfOrder},
		{"lower offset", []offsetEntry{{110, 10}}, 0, false, 105, 20, ErrOutOfOrder},
		{"equal position", []offsetEntry{{110, 10}}, 0, false, 120, 10, ErrOutOfOrder},
		{"lower position", []offsetEntry{{110, 10}}, 0, false, 120, 5, ErrOutOfOrder},
		{"negative position", nil, 0, false, 110, -1, ErrOutOfOrder},
		{"full", []offsetEntry{{101, 1}, {102, 2}, {103, 3}}, 3 * OffsetEntrySize, false, 104, 4, ErrFull},
		{"full, size rounded down", []offsetEntry{{101, 1}, {102, 2}, {103, 3}}, 4*OffsetEntrySize - 1, false, 104, 4, ErrFull},
		{"no slot at all", nil, OffsetEntrySize - 1, false, 104, 4, ErrFull},
		{"sealed", []offsetEntry{{101, 1}}, 0, true, 104, 4, ErrSealed},
	}
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				x := openOffset(t, fsys, filepath.Join(dir, filepathFor(i, "index")), base, tt.maxBytes, true)
				for _, e := range tt.prefill {
					require.NoError(t, x.Append(e.offset, e.position))
				}
				if tt.seal {
					require.NoError(t, x.Trim())
				}
				err := x.Append(tt.offset, tt.position)
				if tt.want == nil {
					require.NoError(t, err)
					require.Equal(t, tt.offset, x.lastOffset())
					return
				}
				require.ErrorIs(t, err, tt.want)
				require.Equal(t, len(tt.prefill), x.Entries(), "a failed append adds nothing")
			})
		}
	})
}

// filepathFor returns a file name unique to test case i.
func filepathFor(i int, ext string) string {
	return string(rune('a'+i%26)) + string(rune('a'+i/26)) + "." + ext
}

func TestOffsetTruncateTo(t *testing.T) {
	const base = 1000
	entries := []offsetEntry{{1010, 100}, {1020, 200}, {1030, 300}}
	tests := []struct {
		name   string
		offset int64
		want   int // entries kept
	}{
		{"below base", 5, 0},
		{"base", base, 0},
		{"before first", 1009, 0},
		{"first exactly", 1010, 0},
		{"between first and second", 1011, 1},
		{"second exactly", 1020, 1},
		{"between second and last", 1025, 2},
		{"last exactly", 1030, 2},
		{"after last", 1031, 3},
		{"beyond the relative range", math.MaxInt64, 3},
	}
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				x := openOffset(t, fsys, filepath.Join(dir, filepathFor(i, "index")), base, 0, true)
				for _, e := range entries {
					require.NoError(t, x.Append(e.offset, e.position))
				}
				x.TruncateTo(tt.offset)
				require.Equal(t, entries[:tt.want], offsetEntries(x))
				require.Equal(t, tt.want, x.Entries())
				o, _ := x.Lookup(math.MaxInt64)
				require.Equal(t, x.lastOffset(), o)
				// The slots after the kept entries are free again.
				require.NoError(t, x.Append(1040, 400))
				require.Equal(t, tt.want+1, x.Entries())
			})
		}
	})
}

func TestOffsetReset(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		x := openOffset(t, fsys, filepath.Join(dir, "a.index"), 50, 0, true)
		for _, e := range randomOffsetEntries(rand.New(rand.NewPCG(1, 2)), 50, 2000) {
			require.NoError(t, x.Append(e.offset, e.position))
		}
		x.Reset()
		require.Zero(t, x.Entries())
		require.Zero(t, x.sizeBytes())
		require.Equal(t, int64(50), x.lastOffset())
		o, p := x.Lookup(math.MaxInt64)
		require.Equal(t, offsetEntry{50, 0}, offsetEntry{o, p})
		require.NoError(t, x.Append(51, 0), "after a reset any offset above the base goes")
		require.Equal(t, 1, x.Entries())
	})
}

func TestOffsetTrimAndReopen(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		const base, maxBytes = 7, 1 << 16
		path := filepath.Join(dir, "00000000000000000007.index")
		es := randomOffsetEntries(rand.New(rand.NewPCG(3, 4)), base, 1500)

		x, err := OpenOffset(fsys, path, base, maxBytes, true)
		require.NoError(t, err)
		require.Equal(t, maxBytes/OffsetEntrySize, x.MaxEntries())
		require.Empty(t, fileBytes(t, fsys, path), "not extended before an entry needs it")
		for _, e := range es {
			require.NoError(t, x.Append(e.offset, e.position))
		}
		require.NoError(t, x.Sync())
		require.NoError(t, x.Trim())
		require.Len(t, fileBytes(t, fsys, path), len(es)*OffsetEntrySize, "trimmed")
		require.True(t, x.Full())
		require.Equal(t, len(es), x.MaxEntries())
		require.ErrorIs(t, x.Append(es[len(es)-1].offset+1, math.MaxInt32), ErrSealed)
		require.Equal(t, es, offsetEntries(x), "the mapping outlives the trim")
		o, p := x.Lookup(es[700].offset)
		require.Equal(t, es[700], offsetEntry{o, p})
		require.NoError(t, x.Trim(), "trim again")
		require.NoError(t, x.Sync())
		require.NoError(t, x.Close())
		require.NoError(t, x.Close(), "close again")
		require.Zero(t, x.Entries())

		t.Run("read-only", func(t *testing.T) {
			ro := openOffset(t, fsys, path, base, 0, false)
			require.Equal(t, es, offsetEntries(ro))
			require.NoError(t, ro.Check())
			require.True(t, ro.Full())
			require.ErrorIs(t, ro.Append(es[len(es)-1].offset+1, math.MaxInt32), ErrSealed)
			require.NoError(t, ro.Trim())
			require.NoError(t, ro.Sync())
			require.NoError(t, ro.Close())
			require.Len(t, fileBytes(t, fsys, path), len(es)*OffsetEntrySize, "read-only leaves the file")
		})
		t.Run("writable", func(t *testing.T) {
			w := openOffset(t, fsys, path, base, maxBytes, true)
			require.Equal(t, es, offsetEntries(w))
			require.Equal(t, maxBytes/OffsetEntrySize, w.MaxEntries())
			require.Len(t, fileBytes(t, fsys, path), len(es)*OffsetEntrySize, "not extended: room is mapped, and taken as entries come")
			last := es[len(es)-1]
			require.NoError(t, w.Append(last.offset+1, last.position+1))
			require.NoError(t, w.Close())
			require.Len(t, fileBytes(t, fsys, path), (len(es)+1)*OffsetEntrySize)
		})
		t.Run("writable, max below the entries", func(t *testing.T) {
			w := openOffset(t, fsys, path, base, 16, true)
			require.Equal(t, len(es)+1, w.Entries(), "no entry is dropped")
			require.True(t, w.Full())
		})
		t.Run("truncate after trim", func(t *testing.T) {
			w := openOffset(t, fsys, path, base, maxBytes, true)
			require.NoError(t, w.Trim())
			w.TruncateTo(es[10].offset)
			require.Equal(t, 10, w.Entries())
			require.NoError(t, w.Close())
			require.Len(t, fileBytes(t, fsys, path), 10*OffsetEntrySize, "close shrinks the file to the entries")
		})
	})
}

func TestOffsetOpen(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		t.Run("read-only missing", func(t *testing.T) {
			_, err := OpenOffset(fsys, filepath.Join(dir, "missing.index"), 0, 0, false)
			require.ErrorIs(t, err, fs.ErrNotExist)
		})
		t.Run("read-only empty", func(t *testing.T) {
			path := filepath.Join(dir, "empty.index")
			writeFile(t, fsys, path, nil)
			x := openOffset(t, fsys, path, 3, 0, false)
			require.Zero(t, x.Entries())
			require.Zero(t, x.MaxEntries())
			o, p := x.Lookup(10)
			require.Equal(t, offsetEntry{3, 0}, offsetEntry{o, p})
			require.NoError(t, x.Check())
		})
		t.Run("read-only torn", func(t *testing.T) {
			path := filepath.Join(dir, "torn.index")
			writeFile(t, fsys, path, make([]byte, 13))
			_, err := OpenOffset(fsys, path, 0, 0, false)
			require.ErrorIs(t, err, ErrCorrupt)
			var ce *CorruptError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, CorruptError{Path: path, Entry: -1, Pos: 13, Reason: ce.Reason}, *ce)
		})
		t.Run("writable torn rounds down", func(t *testing.T) {
			path := filepath.Join(dir, "torn-w.index")
			writeFile(t, fsys, path, []byte{0, 0, 0, 1, 0, 0, 0, 2, 0xff, 0xff})
			x := openOffset(t, fsys, path, 0, 64, true)
			require.Equal(t, 1, x.Entries())
			require.Equal(t, 8, x.MaxEntries())
			o, p := x.Entry(0)
			require.Equal(t, offsetEntry{1, 2}, offsetEntry{o, p})
			require.NoError(t, x.Append(2, 3), "the torn bytes are overwritten")
		})
		t.Run("bad arguments", func(t *testing.T) {
			_, err := OpenOffset(fsys, filepath.Join(dir, "neg.index"), -1, 0, true)
			require.Error(t, err)
			_, err = OpenOffset(fsys, filepath.Join(dir, "neg.index"), 0, -1, true)
			require.Error(t, err)
		})
		t.Run("read-only ignores max bytes", func(t *testing.T) {
			path := filepath.Join(dir, "ro.index")
			writeFile(t, fsys, path, []byte{0, 0, 0, 1, 0, 0, 0, 2})
			x := openOffset(t, fsys, path, 0, -1, false)
			require.Equal(t, 1, x.MaxEntries())
		})
		t.Run("default size", func(t *testing.T) {
			x := openOffset(t, fsys, filepath.Join(dir, "default.index"), 0, 0, true)
			require.Equal(t, 1310720, x.MaxEntries())
		})
	})
}

// TestOffsetCrashed reopens an index that was never trimmed, as a crash
// leaves it: every slot reserved after the entries reads as an entry, and
// Check says so.
func TestOffsetCrashed(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		for _, n := range []int{1, 5} {
			path := filepath.Join(dir, fmt.Sprintf("live-%d.index", n))
			x := openOffset(t, fsys, path, 100, 64*OffsetEntrySize, true)
			for i := range n {
				require.NoError(t, x.Append(int64(101+i), int32(10*(i+1))))
			}
			require.NoError(t, x.Sync())
			crashed := filepath.Join(dir, fmt.Sprintf("crashed-%d.index", n))
			writeFile(t, fsys, crashed, fileBytes(t, fsys, path))

			c := openOffset(t, fsys, crashed, 100, 64*OffsetEntrySize, true)
			require.Equal(t, 64, c.Entries(), "n=%d: every slot is taken as an entry", n)
			require.True(t, c.Full())
			err := c.Check()
			require.ErrorIs(t, err, ErrCorrupt, "n=%d", n)
			var ce *CorruptError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, n, ce.Entry, "n=%d: the first zero slot after the entries", n)
			require.Equal(t, crashed, ce.Path)

			c.Reset()
			require.NoError(t, c.Check())
			require.NoError(t, c.Append(101, 10))
			require.NoError(t, x.Close())
			require.NoError(t, c.Close())
		}
	})
}

// putOffset encodes an offset index entry.
func putOffset(rel, pos uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, rel), pos)
}

func TestOffsetCheck(t *testing.T) {
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
		{"one entry at base", putOffset(0, 0), -1},
		{"valid", cat(putOffset(1, 10), putOffset(5, 20), putOffset(9, 30)), -1},
		{"offset equal", cat(putOffset(1, 10), putOffset(1, 20)), 1},
		{"offset decreasing", cat(putOffset(1, 10), putOffset(5, 20), putOffset(3, 30)), 2},
		{"position equal", cat(putOffset(1, 10), putOffset(5, 10)), 1},
		{"position decreasing", cat(putOffset(1, 10), putOffset(5, 20), putOffset(9, 15)), 2},
		{"offset below base", cat(putOffset(math.MaxUint32, 10)), 0},
		{"negative position", cat(putOffset(1, 10), putOffset(2, math.MaxUint32)), 1},
		{"zeros", make([]byte, 32), 1},
	}
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				path := filepath.Join(dir, filepathFor(i, "index"))
				writeFile(t, fsys, path, tt.file)
				x := openOffset(t, fsys, path, 1000, 0, false)
				require.Equal(t, len(tt.file)/OffsetEntrySize, x.Entries())
				err := x.Check()
				if tt.entry < 0 {
					require.NoError(t, err)
					return
				}
				require.ErrorIs(t, err, ErrCorrupt)
				var ce *CorruptError
				require.True(t, errors.As(err, &ce))
				require.Equal(t, tt.entry, ce.Entry)
				require.Equal(t, int64(tt.entry*OffsetEntrySize), ce.Pos)
				require.Equal(t, path, ce.Path)
				require.Contains(t, err.Error(), path)
			})
		}
	})
}

func TestEntryOutOfRange(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		x := openOffset(t, fsys, filepath.Join(dir, "a.index"), 0, 0, true)
		require.NoError(t, x.Append(1, 1))
		require.Panics(t, func() { x.Entry(1) })
		require.Panics(t, func() { x.Entry(-1) })
		tx := openTime(t, fsys, filepath.Join(dir, "a.timeindex"), 0, 0, true)
		require.Panics(t, func() { tx.Entry(0) })
	})
}
