package segment

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// shrunkFS reports each .txnindex file one entry larger than it is, as
// one the owner's recovery cut between a reader's Size and its read.
type shrunkFS struct{ vfs.FS }

type shrunkFile struct{ vfs.File }

func (f shrunkFile) Size() (int64, error) {
	n, err := f.File.Size()
	return n + AbortedTxnSize, err
}

func (s shrunkFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := s.FS.OpenFile(name, flag, perm)
	if err == nil && strings.HasSuffix(name, TxnIndexSuffix) {
		return shrunkFile{f}, nil
	}
	return f, err
}

// TestFollowTxnIndexShrinks: a follower opens a segment whose .txnindex
// is cut while it reads it, with the entries that are left.
func TestFollowTxnIndexShrinks(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{MaxBytes: 1 << 16}
	w, err := Create(vfs.OS, dir, 0, cfg)
	require.NoError(t, err)
	require.NoError(t, w.Append(encode(t, makeRecords(0, 3, 10, 1))))
	require.NoError(t, w.AppendAbortedTxn(AbortedTxn{ProducerID: 7, FirstOffset: 0, LastOffset: 2, LastStableOffset: 0}))
	require.NoError(t, w.Close())
	for _, trusted := range []bool{false, true} {
		f, err := OpenFollow(shrunkFS{vfs.OS}, dir, 0, cfg, trusted)
		require.NoError(t, err, "trusted %v", trusted)
		require.Len(t, f.AbortedTxns(), 1)
		require.NoError(t, f.Close())
	}
}
