package strata_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// TestOlderStoreDirectories: a directory as an older Strata left it opens
// as it was left. Its clean-shutdown marker a file of its own, or a second
// name of its .lock file: clean, the marker removed, the records there. No marker
// (a crash): not clean, the records recovered.
func TestOlderStoreDirectories(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		clean bool
	}{
		{"marker of its own", func(t *testing.T, dir string) {
			marker := filepath.Join(dir, ".clean-shutdown")
			require.NoError(t, os.Remove(marker))
			require.NoError(t, os.WriteFile(marker, nil, 0o644))
		}, true},
		{"lock file, the marker a second name of it", func(t *testing.T, dir string) {
			marker := filepath.Join(dir, ".clean-shutdown")
			require.NoError(t, os.Remove(marker))
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".lock"), nil, 0o644))
			require.NoError(t, os.Link(filepath.Join(dir, ".lock"), marker))
		}, true},
		{"no marker", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, ".clean-shutdown")))
		}, false},
		{"marker and a leftover temporary registry", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "topics.json.tmp"), []byte("{torn"), 0o644))
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := strata.Open(dir, &strata.Options{Logger: logOnFailure(t)})
			require.NoError(t, err)
			require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
			_, err = s.Append(ctx, "t", rec("k", "v"), rec("k", "w"))
			require.NoError(t, err)
			require.NoError(t, s.Close())
			tc.setup(t, dir)

			s, err = strata.Open(dir, &strata.Options{Logger: logOnFailure(t)})
			require.NoError(t, err)
			require.Equal(t, tc.clean, strata.OpenedClean(s))
			_, err = os.Stat(filepath.Join(dir, ".clean-shutdown"))
			require.ErrorIs(t, err, os.ErrNotExist, "no marker while the store is open")
			_, err = os.Stat(filepath.Join(dir, "topics.json.tmp"))
			require.ErrorIs(t, err, os.ErrNotExist, "a leftover temporary registry goes")
			recs, err := s.Read(ctx, "t", 0, 0, 10)
			require.NoError(t, err)
			require.Len(t, recs, 2)
			require.NoError(t, s.Close())
		})
	}
}
