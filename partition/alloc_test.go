package partition

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// TestAppendAllocatesNothing appends on real files, as the benchmarks do:
// batches of 100 records (each over the index interval, so each takes an
// offset index entry) and single records (copied into the mapping) allocate
// nothing, through Encode and AppendEncoded with the caller's buffer, and
// through Append once its pooled encode buffer exists (not checked under
// the race detector, which makes sync.Pool drop buffers).
func TestAppendAllocatesNothing(t *testing.T) {
	p, err := Open(vfs.OS, t.TempDir(), benchConfig(SyncNever), false)
	require.NoError(t, err)
	defer p.Close()
	buf := make([]byte, 0, 64<<10)
	for _, n := range []int{100, 1} {
		recs := benchRecords(n)
		allocs := testing.AllocsPerRun(200, func() {
			b, err := p.Encode(buf[:0], recs)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.AppendEncoded(b); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "Encode and AppendEncoded, batches of %d", n)
		if raceEnabled {
			continue
		}
		_, err := p.Append(recs) // the encode buffer
		require.NoError(t, err)
		allocs = testing.AllocsPerRun(200, func() {
			if _, err := p.Append(recs); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "Append, batches of %d", n)
	}
}
