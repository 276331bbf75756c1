package strata_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// syncs returns how many fsyncs (of files and directories) and msyncs m
// has counted.
func syncs(m *vfs.Mem) int {
	return m.Count(vfs.OpSync) + m.Count(vfs.OpSyncDir) + m.Count(vfs.OpSyncMap)
}

// coldCycle runs what a test does with a store of its own: Open in a new
// directory, CreateTopic, Append one record, Read it, Close.
func coldCycle(t *testing.T, m *vfs.Mem, policy strata.SyncPolicy) {
	t.Helper()
	s, err := strata.Open("/store", &strata.Options{FS: m, Sync: policy})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	_, err = s.Append(ctx, "t", rec("k", "v"))
	require.NoError(t, err)
	recs, err := s.Read(ctx, "t", 0, 0, 1)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.NoError(t, s.Close())
}

// TestSyncNeverNeverSyncs: under SyncNever, a store's cycle from a new
// directory to Close makes no fsync and no msync — of the data, the
// indexes, the checkpoints, topics.json, the clean-shutdown marker or a
// directory — and yet leaves the files whole for the next Open (the OS has
// them all). The other policies still make their Close durable.
func TestSyncNeverNeverSyncs(t *testing.T) {
	m := vfs.NewMem()
	coldCycle(t, m, strata.SyncNever)
	require.Zero(t, syncs(m), "fsyncs and msyncs under SyncNever")

	s, err := strata.Open("/store", &strata.Options{FS: m, Sync: strata.SyncNever})
	require.NoError(t, err)
	recs, err := s.Read(ctx, "t", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 1, "everything reached the file system")
	require.NoError(t, s.Close())
	require.Zero(t, syncs(m))

	for _, policy := range []strata.SyncPolicy{strata.SyncEvery(0), strata.SyncAlways} {
		m := vfs.NewMem()
		coldCycle(t, m, policy)
		require.NotZero(t, syncs(m), "%v syncs", policy)
		c := m.Crash()
		s, err := strata.Open("/store", &strata.Options{FS: c, Sync: policy})
		require.NoError(t, err)
		recs, err := s.Read(ctx, "t", 0, 0, 10)
		require.NoError(t, err)
		require.Len(t, recs, 1, "%v: Close made the record durable", policy)
		require.NoError(t, s.Close())
	}
}

// TestSyncAlwaysAppendSyncsOnlyTheLog: under SyncAlways, with one
// appender, an AppendTo makes one sync, of the partition's .log: nothing
// of the store's own (topics.json, checkpoints, the offsets topic, the
// directories) nor the segment's indexes is synced per call.
func TestSyncAlwaysAppendSyncsOnlyTheLog(t *testing.T) {
	m := vfs.NewMem()
	var mu sync.Mutex
	var synced []string
	m.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpSync || op == vfs.OpSyncDir || op == vfs.OpSyncMap {
			mu.Lock()
			synced = append(synced, op.String()+" "+path)
			mu.Unlock()
		}
		return nil
	})
	s, err := strata.Open("/store", &strata.Options{FS: m, Sync: strata.SyncAlways})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	batch := make([]strata.Record, 100)
	for i := range batch {
		batch[i] = rec(fmt.Sprintf("key-%012d", i), strings.Repeat("v", 100))
	}
	_, err = s.AppendTo(ctx, "t", 0, batch...) // creates the index files: a directory sync
	require.NoError(t, err)
	take := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := synced
		synced = nil
		return out
	}
	take()
	for i := range 20 {
		_, err := s.AppendTo(ctx, "t", 0, batch...)
		require.NoError(t, err)
		require.Equal(t, []string{"sync /store/t-0/00000000000000000000.log"}, take(), "append %d", i)
	}
	m.SetInjector(nil)
	require.NoError(t, s.Close())
}
