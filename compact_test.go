package strata_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

func TestCompactTopic(t *testing.T) {
	s := stratatest.Open(t, &strata.Options{CleanerInterval: -1})
	require.NoError(t, s.CreateTopic("profiles", strata.TopicConfig{
		CleanupPolicy: strata.CleanupCompact, SegmentBytes: 4096, MinCleanableDirtyRatio: -1,
	}))
	_, err := s.Append(ctx, "profiles", strata.Record{Value: []byte("no key")})
	require.ErrorIs(t, err, strata.ErrNoKey)
	for i := range 300 {
		_, err := s.Append(ctx, "profiles", rec(fmt.Sprint("user-", i%10), fmt.Sprint("v", i)))
		require.NoError(t, err)
	}
	before, err := s.DescribeTopic("profiles")
	require.NoError(t, err)
	require.Equal(t, 24*time.Hour, before.Config.DeleteRetention, "the cleaner's default, filled in")
	require.Equal(t, -1.0, before.Config.MinCleanableDirtyRatio, "as given")
	st, err := s.Compact(ctx, "profiles")
	require.NoError(t, err)
	require.Positive(t, st.RecordsRead)
	after, err := s.DescribeTopic("profiles")
	require.NoError(t, err)
	require.Less(t, after.Partitions[0].Bytes, before.Partitions[0].Bytes/3)
	require.Equal(t, before.Partitions[0].EndOffset, after.Partitions[0].EndOffset, "offsets never change")

	latest := map[string]string{}
	for r, err := range s.Records(ctx, "profiles", 0, 0) {
		require.NoError(t, err)
		latest[string(r.Key)] = string(r.Value)
		if r.Offset == 299 {
			break
		}
	}
	for u := range 10 {
		require.Equal(t, fmt.Sprint("v", 290+u), latest[fmt.Sprint("user-", u)], "the latest value of each key")
	}

	// The store's own offsets topic is compacted too.
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	_, err = s.Append(ctx, "t", rec("k", "v"))
	require.NoError(t, err)
	for range 3000 {
		require.NoError(t, s.Commit("g", "t", 0, 1, "some metadata to take room"))
	}
	st, err = s.Compact(ctx, strata.ConsumerOffsetsTopic)
	require.NoError(t, err)
	om, ok := s.Committed("g", "t", 0)
	require.True(t, ok)
	require.Equal(t, int64(1), om.Offset)
}
