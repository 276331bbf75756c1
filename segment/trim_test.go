package segment

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// TestCloseTrimsOnlyAGrownLog: closing a segment that took no append since
// it was opened truncates nothing (its .log already has its batches'
// length), and one that took appends after a reopen, which reserved blocks
// past them, is still trimmed to its batches by Close.
func TestCloseTrimsOnlyAGrownLog(t *testing.T) {
	fx, m := memFixture(t)
	logTruncates := 0 // the injector runs under the Mem's lock
	m.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpTruncate && strings.HasSuffix(path, LogSuffix) {
			logTruncates++
		}
		return nil
	})
	cfg := Config{MaxBytes: 8 << 20}
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(1, 2)), 20, 5, 100)
	require.NoError(t, s.Close())
	require.Equal(t, 1, logTruncates, "Close trims the reserved blocks")

	for range 2 {
		r, err := Open(fx.fsys, fx.dir, 0, cfg, true)
		require.NoError(t, err)
		requireRecords(t, written, 0, readAll(t, r, 0, 1<<30))
		require.NoError(t, r.Close())
		require.Equal(t, 1, logTruncates, "a Close with nothing appended since Open truncates nothing")
	}

	r, err := Open(fx.fsys, fx.dir, 0, cfg, true)
	require.NoError(t, err)
	written = append(written, appendRandom(t, r, rand.New(rand.NewPCG(3, 4)), 5, 5, 100)...)
	require.Greater(t, logFileSize(t, fx, 0), r.Size(), "the appends reserved blocks past the batches")
	require.NoError(t, r.Close())
	require.Equal(t, 2, logTruncates)
	require.Equal(t, r.Size(), logFileSize(t, fx, 0), "Close trimmed the reserved blocks")

	r, err = Open(fx.fsys, fx.dir, 0, cfg, true)
	require.NoError(t, err)
	requireRecords(t, written, 0, readAll(t, r, 0, 1<<30))
	require.NoError(t, r.Close())
}
