package segment

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// TestZerosOnAGoroutine checks who writes the zeros ahead of the appends:
// on the OS's file system with more than one P, a goroutine of the
// segment's, a step at a time, while the appends go on into the zeros
// before it, which it never overwrites; with one P, or in memory (whose
// crash tests count operations in order), the append itself. Either way
// every batch reads back, before and after Seal and a reopen, and Seal
// trims the zeros.
func TestZerosOnAGoroutine(t *testing.T) {
	if !zerosAhead {
		t.Skip("appends write no zeros ahead here")
	}
	tests := []struct {
		name  string
		fsys  func(t *testing.T) fixture
		procs int
		async bool
	}{
		{"os", func(t *testing.T) fixture { return fixture{vfs.OS, t.TempDir()} }, 2, true},
		{"os/one P", func(t *testing.T) fixture { return fixture{vfs.OS, t.TempDir()} }, 1, false},
		{"nosync os", func(t *testing.T) fixture { return fixture{vfs.NoSync(vfs.OS), t.TempDir()} }, 2, true},
		{"mem", func(t *testing.T) fixture { fx, _ := memFixture(t); return fx }, 2, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("fs=%s", tt.name), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(tt.procs))
			fx := tt.fsys(t)
			cfg := Config{MaxBytes: 8 << 20}
			s, err := Create(fx.fsys, fx.dir, 0, cfg)
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(7, 7))
			var written []writtenBatch
			started := 0
			for s.Size() < 3<<20 {
				written = append(written, appendRandom(t, s, r, 1, 3, 300)...)
				if s.zeros.on {
					started++
					require.GreaterOrEqual(t, s.zeros.to, s.zeroed, "a step past the zeros known")
					require.LessOrEqual(t, s.Size(), s.zeroed, "the appends stay below it")
				}
				if len(written) == 5000 {
					requireRecords(t, written, 0, readAll(t, s, 0, 1<<30))
				}
			}
			if tt.async {
				require.Positive(t, started, "steps of zeros written on a goroutine")
			} else {
				require.Zero(t, started, "zeros written by the appends")
			}
			requireRecords(t, written, 0, readAll(t, s, 0, 1<<30))
			require.NoError(t, s.Seal())
			require.False(t, s.zeros.on, "Seal waits for the step")
			require.Equal(t, s.Size(), logFileSize(t, fx, 0), "Seal trims the zeros")
			require.NoError(t, s.Close())
			o, err := Open(fx.fsys, fx.dir, 0, cfg, false)
			require.NoError(t, err)
			requireRecords(t, written, 0, readAll(t, o, 0, 1<<30))
			require.NoError(t, o.Close())
		})
	}
}
