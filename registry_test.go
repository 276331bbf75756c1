package strata_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// TestDamagedRegistry: a topics.json that is damaged — whether it no
// longer parses or a flipped digit still parses — makes Open fail with
// ErrCorrupt and say how to recover; RebuildRegistry then rebuilds it from
// the partition directories with every topic's data, id and commits.
func TestDamagedRegistry(t *testing.T) {
	damages := []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"flipped digit", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"partitions": 3`), []byte(`"partitions": 7`), 1)
		}},
		{"emptied", func([]byte) []byte { return nil }},
	}
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := strata.Open(dir, nil)
			require.NoError(t, err)
			require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 3}))
			require.NoError(t, s.CreateTopic("profiles", strata.TopicConfig{CleanupPolicy: strata.CleanupCompact,
				SegmentBytes: 512, MinCleanableDirtyRatio: -1}))
			for i := range 30 {
				_, err := s.Append(ctx, "orders", rec(fmt.Sprint("k", i), fmt.Sprint("v", i)))
				require.NoError(t, err)
				_, err = s.Append(ctx, "profiles", rec(fmt.Sprint("u", i%5), fmt.Sprint("p", i)))
				require.NoError(t, err)
			}
			require.NoError(t, s.Commit("g", "orders", 1, 2, "meta"))
			orders, err := s.DescribeTopic("orders")
			require.NoError(t, err)
			st, err := s.Compact(ctx, "profiles")
			require.NoError(t, err)
			require.Positive(t, st.Superseded, "the cleaner ran")
			require.NoError(t, s.Close())

			path := filepath.Join(dir, "topics.json")
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			damaged := d.damage(bytes.Clone(b))
			require.NotEqual(t, b, damaged, "the damage changes the file")
			require.NoError(t, os.WriteFile(path, damaged, 0o644))

			_, err = strata.Open(dir, nil)
			require.ErrorIs(t, err, strata.ErrCorrupt)
			require.Contains(t, err.Error(), "RebuildRegistry")

			names, err := strata.RebuildRegistry(dir)
			require.NoError(t, err)
			require.Equal(t, []string{"orders", "profiles"}, names)
			names, err = strata.RebuildRegistry(dir)
			require.ErrorIs(t, err, strata.ErrInvalidConfig, "a registry that reads fine is left alone")
			require.Nil(t, names)
			kept, err := os.ReadFile(path + ".damaged")
			require.NoError(t, err)
			require.True(t, bytes.Equal(damaged, kept), "the damaged file is kept for inspection")

			s, err = strata.Open(dir, nil)
			require.NoError(t, err)
			defer s.Close()
			require.Equal(t, []string{"orders", "profiles"}, s.Topics())
			got, err := s.DescribeTopic("orders")
			require.NoError(t, err)
			require.Equal(t, orders.ID, got.ID, "the id comes back from partition.metadata")
			require.Equal(t, 3, got.Config.Partitions)
			require.Equal(t, strata.TopicConfig{}.Retention-1, got.Config.Retention, "nothing is deleted by retention")
			total := 0
			for p := range 3 {
				recs, err := s.Read(ctx, "orders", p, 0, 100)
				require.NoError(t, err)
				total += len(recs)
			}
			require.Equal(t, 30, total)
			prof, err := s.DescribeTopic("profiles")
			require.NoError(t, err)
			require.Equal(t, strata.CleanupCompact, prof.Config.CleanupPolicy, "a compacted topic is told by its cleaner checkpoint")
			om, ok := s.Committed("g", "orders", 1)
			require.True(t, ok, "commits carry the id, which matches")
			require.Equal(t, int64(2), om.Offset)
		})
	}
}
