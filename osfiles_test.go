package strata_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// TestOSWrappedIsLocked: a store on a file system wrapping the OS's
// (vfs.NoSync(vfs.OS)) has files other processes can open, so it takes
// the directory lock as one on vfs.OS does.
func TestOSWrappedIsLocked(t *testing.T) {
	dir := t.TempDir()
	opts := &strata.Options{FS: vfs.NoSync(vfs.OS)}
	s, err := strata.Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	_, err = strata.Open(dir, opts)
	require.ErrorIs(t, err, strata.ErrLocked)
	_, err = strata.Open(dir, nil)
	require.ErrorIs(t, err, strata.ErrLocked)
}
