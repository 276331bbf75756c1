package partition

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/internal/vfs"
)

// TestAppendAllocatesNothing appends on real files, as the benchmarks do:
// batches of 100 records (each over the index interval, so each takes an
// offset index entry) and single records (copied into the mapping) allocate
// nothing once the encode buffers exist.
func TestAppendAllocatesNothing(t *testing.T) {
	p, err := Open(vfs.OS, t.TempDir(), benchConfig(SyncNever), false)
	require.NoError(t, err)
	defer p.Close()
	for _, n := range []int{100, 1} {
		recs := benchRecords(n)
		_, err := p.Append(recs) // the encode buffer
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(200, func() {
			if _, err := p.Append(recs); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "batches of %d", n)
	}
}
