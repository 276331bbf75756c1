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

// TestFloorCeil checks the search on every field against linear scans, with
// keys of several shapes: small random steps that repeat (as time index
// offsets do) across the warm boundary with a jump in the middle, even steps
// (where the interpolated guess is right), squares (where it is far off), and
// for int64 keys a span from near MinInt64 to near MaxInt64 (which must not
// overflow the guess) and keys near 2^62 one apart (which float64 cannot
// tell apart).
func TestFloorCeil(t *testing.T) {
	fields := []struct {
		name string
		f    field
		at   int  // the key's byte offset in the entry
		wide bool // int64, else int32
	}{
		{"offset key", offsetKey, 0, false},
		{"offset value", offsetValue, 4, false},
		{"time key", timeKey, 0, true},
		{"time value", timeValue, 8, false},
	}
	for _, fc := range fields {
		for _, shape := range []string{"steps", "even", "squares", "extremes", "dense-large"} {
			for _, n := range []int{0, 1, 2, 3, 33, 34, 35, 681, 682, 683, 684, 1024, 1025, 1026, 1500} {
				if (shape == "extremes" || shape == "dense-large") && !fc.wide {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/entries=%d", fc.name, shape, n), func(t *testing.T) {
					r := rand.New(rand.NewPCG(uint64(n), 3))
					data := make([]byte, n*fc.f.size)
					keys := make([]int64, n)
					k := int64(-3)
					for i := range keys {
						switch shape {
						case "steps":
							k += r.Int64N(3) // 0: a repeat
							if i == n/2 && !fc.wide {
								k = max(k, math.MaxInt32-int64(n)) // near the sign bit
							}
						case "even":
							k = int64(4*i + 1)
						case "squares":
							k = int64(i * i)
						case "dense-large":
							// Keys a float64 cannot tell apart, so that
							// the interpolated guess is 0/0 (NaN).
							k = 1<<62 + int64(i)
						case "extremes":
							k = math.MinInt64 + 2 + int64(i)*(math.MaxInt64/int64(n)*2)
							if i == n-1 {
								k = math.MaxInt64 - 2
							}
						}
						keys[i] = k
						o := i*fc.f.size + fc.at
						if fc.wide {
							binary.BigEndian.PutUint64(data[o:], uint64(k))
						} else {
							binary.BigEndian.PutUint32(data[o:], uint32(int32(k)))
						}
					}
					targets := []int64{math.MinInt64, -5, k + 2, math.MaxInt64}
					for _, key := range keys {
						targets = append(targets, key-1, key, key+1)
					}
					for _, target := range targets {
						wantFloor, wantCeil := -1, n
						for i, key := range keys {
							if key <= target {
								wantFloor = i
							}
							if key >= target && wantCeil == n {
								wantCeil = i
							}
						}
						if got := floor(data, n, fc.f, target); got != wantFloor {
							t.Fatalf("floor(%d) = %d, want %d", target, got, wantFloor)
						}
						if got := ceil(data, n, fc.f, target); got != wantCeil {
							t.Fatalf("ceil(%d) = %d, want %d", target, got, wantCeil)
						}
					}
					require.Equal(t, 0, ceil(data, n, fc.f, math.MinInt64))
					require.Equal(t, n-1, floor(data, n, fc.f, math.MaxInt64))
				})
			}
		}
	}
}

// FuzzOffset opens arbitrary bytes as a read-only offset index: opening and
// Check must not panic, and when Check passes every lookup must agree with a
// linear scan.
func FuzzOffset(f *testing.F) {
	f.Add([]byte{})
	f.Add(append(putOffset(1, 10), putOffset(5, 20)...))
	f.Add(make([]byte, 24))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		fsys := vfs.NewMem()
		writeFile(t, fsys, "f.index", b)
		x, err := OpenOffset(fsys, "f.index", 100, 0, false)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		defer x.Close()
		if x.Check() != nil {
			return
		}
		es := offsetEntries(x)
		for _, e := range es {
			for _, target := range []int64{e.offset - 1, e.offset, e.offset + 1} {
				o, p := x.Lookup(target)
				wantO, wantP := bruteLookup(es, 100, target)
				require.Equal(t, offsetEntry{wantO, wantP}, offsetEntry{o, p})
			}
		}
	})
}

// FuzzTime is FuzzOffset for the time index.
func FuzzTime(f *testing.F) {
	f.Add([]byte{})
	f.Add(append(putTime(10, 1), putTime(20, 1)...))
	f.Add(make([]byte, 36))
	f.Fuzz(func(t *testing.T, b []byte) {
		fsys := vfs.NewMem()
		path := filepath.Join("/", "f.timeindex")
		writeFile(t, fsys, path, b)
		x, err := OpenTime(fsys, path, 100, 0, false)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		defer x.Close()
		if x.Check() != nil {
			return
		}
		es := timeEntries(x)
		for _, e := range es {
			for _, ts := range []int64{e.timestamp - 1, e.timestamp, e.timestamp + 1} {
				gotTs, gotO := x.Lookup(ts)
				wantTs, wantO := bruteTimeLookup(es, 100, ts)
				require.Equal(t, timeEntry{wantTs, wantO}, timeEntry{gotTs, gotO})
			}
		}
	})
}
