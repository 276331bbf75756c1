package strata_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// flipInBatch flips the last byte of the n-th batch (from 0) of a log file.
func flipInBatch(t *testing.T, path string, n int) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	pos := 0
	for i := 0; ; i++ {
		h, err := log.ReadHeader(data[pos:])
		require.NoError(t, err, "batch %d", i)
		if i == n {
			data[pos+h.Size()-1] ^= 0x40
			require.NoError(t, os.WriteFile(path, data, 0o644))
			return
		}
		pos += h.Size()
	}
}

// TestDamagedOffsetsTopicOpens: a flipped byte in __consumer_offsets does
// not fail Open for the whole store. The topic recovers like any partition:
// the commits before the damage are kept, the log says what was cut, and
// the store takes new commits, also after another Open.
func TestDamagedOffsetsTopicOpens(t *testing.T) {
	for _, clean := range []bool{true, false} {
		t.Run(fmt.Sprint("clean=", clean), func(t *testing.T) {
			dir := t.TempDir()
			s, err := strata.Open(dir, nil)
			require.NoError(t, err)
			require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
			for i := range 40 {
				_, err := s.AppendTo(ctx, "t", 0, rec("k", fmt.Sprint(i)))
				require.NoError(t, err)
			}
			for i := 1; i <= 30; i++ {
				require.NoError(t, s.Commit("g", "t", 0, int64(i), "")) // one batch each
			}
			require.NoError(t, s.Close())
			flipInBatch(t, filepath.Join(dir, strata.ConsumerOffsetsTopic+"-0", "00000000000000000000.log"), 20)
			if !clean {
				require.NoError(t, os.Remove(filepath.Join(dir, ".clean-shutdown")))
			}

			logs := &warnRecorder{}
			s, err = strata.Open(dir, &strata.Options{Logger: slog.New(logs)})
			require.NoError(t, err, "a damaged offsets topic does not keep the store from opening")
			om, ok := s.Committed("g", "t", 0)
			require.True(t, ok)
			require.Equal(t, int64(20), om.Offset, "the last commit before the damaged batch")
			require.True(t, logs.mention(strata.ConsumerOffsetsTopic), "the log says what was cut: %q", logs.all())
			require.NoError(t, s.Commit("g", "t", 0, 35, ""))
			require.NoError(t, s.Close())

			s, err = strata.Open(dir, nil)
			require.NoError(t, err)
			defer s.Close()
			om, ok = s.Committed("g", "t", 0)
			require.True(t, ok)
			require.Equal(t, int64(35), om.Offset, "commits after the recovery are kept")
			recs, err := s.Read(ctx, "t", 0, 0, 100)
			require.NoError(t, err)
			require.Len(t, recs, 40, "the topic's data is untouched")
		})
	}
}
