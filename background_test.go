package strata_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// TestOpenStartsNoGoroutine: a reopen under the default policy, with its
// retention and cleaner intervals, starts no goroutine of the store's or
// its partitions' until a write or a job is due; its appends then start
// the partition's, and Close stops everything.
func TestOpenStartsNoGoroutine(t *testing.T) {
	fsys := vfs.NewMem()
	s, err := strata.Open("/s", &strata.Options{FS: fsys})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 3, CleanupPolicy: strata.CleanupCompact}))
	require.NoError(t, s.Close())

	before := runtime.NumGoroutine()
	s, err = strata.Open("/s", &strata.Options{FS: fsys})
	require.NoError(t, err)
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines after Open")
	_, err = s.AppendTo(ctx, "t", 0, strata.Record{Key: []byte("k"), Value: []byte("v")})
	require.NoError(t, err)
	require.NoError(t, s.Close())
}
