package strata_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// deletedHeld counts the files under dir that the process holds open (a
// descriptor in /proc/self/fd) or mapped (a line of /proc/self/maps) after
// they were removed.
func deletedHeld(t *testing.T, dir string) (fds, maps int) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self")
	}
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, dir) && strings.HasSuffix(target, " (deleted)") {
			fds++
		}
	}
	data, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, dir) && strings.HasSuffix(line, " (deleted)") {
			maps++
		}
	}
	return fds, maps
}

// TestReadOnlyLongOpenReleasesSegments: a reader left open while the
// owner rolls hundreds of segments and retention removes them holds no
// descriptor or mapping of a removed file once it has read on, and no
// more descriptors than the segments there are.
func TestReadOnlyLongOpenReleasesSegments(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever, RetentionCheckInterval: -1, CleanerInterval: -1})
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.CreateTopic("t", strata.TopicConfig{SegmentBytes: 1024, RetentionBytes: 4096}))
	r, err := strata.Open(dir, roOpts())
	require.NoError(t, err)
	defer r.Close()
	var next int64
	for round := range 40 {
		appendN(t, w, "t", int(next), 50)
		_, err := w.EnforceRetention(ctx)
		require.NoError(t, err)
		for {
			recs, err := r.Read(ctx, "t", 0, next, 100)
			require.NoError(t, err, "round %d", round)
			if len(recs) == 0 {
				break
			}
			for _, rec := range recs {
				require.Equal(t, roValue(rec.Offset), string(rec.Value))
			}
			next = recs[len(recs)-1].Offset + 1
		}
		require.Equal(t, int64(50*(round+1)), next)
	}
	r.Stats() // a refresh after the last retention
	fds, maps := deletedHeld(t, dir)
	require.Zero(t, fds, "descriptors of removed files")
	require.Zero(t, maps, "mappings of removed files")
	segs, err := filepath.Glob(filepath.Join(dir, "t-0", "*.log"))
	require.NoError(t, err)
	open := 0
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	for _, e := range ents {
		// The files of the segments there are (the owner's and the
		// reader's); those renamed .deleted are the owner's to remove.
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.HasPrefix(target, filepath.Join(dir, "t-0")) && !strings.Contains(target, ".deleted") {
			open++
		}
	}
	require.LessOrEqual(t, open, 2*4*len(segs)+4, "descriptors under t-0 for %d segments", len(segs))
}

// TestReadOnlyTopicRecreated: a topic deleted and created again under the
// same name (a new topic id), with other records and more partitions,
// reads as the new topic from a reader that held the old one, never
// mixing the two; a reader reading the old one keeps its records as
// they were.
func TestReadOnlyTopicRecreated(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.CreateTopic("t", strata.TopicConfig{SegmentBytes: 1024}))
	appendN(t, w, "t", 0, 100)
	r, err := strata.Open(dir, roOpts())
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, int64(100), readAll(t, r, "t", 0))
	old, err := r.Read(ctx, "t", 0, 0, 10)
	require.NoError(t, err)

	require.NoError(t, w.DeleteTopic("t"))
	require.NoError(t, w.CreateTopic("t", strata.TopicConfig{Partitions: 3}))
	for i := range 7 {
		_, err := w.AppendTo(ctx, "t", 0, strata.Record{Value: []byte(fmt.Sprintf("new-%d", i))})
		require.NoError(t, err)
	}
	for i := range 3 {
		_, err := w.AppendTo(ctx, "t", 2, strata.Record{Value: []byte(fmt.Sprintf("p2-%d", i))})
		require.NoError(t, err)
	}
	got := readRecords(t, r, "t")
	require.Len(t, got, 7, "the new topic's records: %v", got)
	for i, v := range got {
		require.Equal(t, fmt.Sprintf("%d=new-%d", i, i), v)
	}
	recs, err := r.Read(ctx, "t", 2, 0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 3, "a partition the new topic has and the old had not")
	hi, err := r.ListOffsets("t", 0, strata.Latest)
	require.NoError(t, err)
	require.Equal(t, int64(7), hi)
	for i, rec := range old {
		require.Equal(t, roValue(int64(i)), string(rec.Value), "records read before stay as they were")
	}
}

// TestReadOnlyPartitionsAdded: partitions the owner adds are read by a
// reader opened before, as the owner appends to them.
func TestReadOnlyPartitionsAdded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.CreateTopic("t", strata.TopicConfig{}))
	appendN(t, w, "t", 0, 5)
	r, err := strata.Open(dir, roOpts())
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, int64(5), readAll(t, r, "t", 0))
	require.NoError(t, w.CreatePartitions("t", 4))
	for p := 1; p < 4; p++ {
		for i := range p {
			_, err := w.AppendTo(ctx, "t", p, strata.Record{Value: []byte(fmt.Sprintf("%d-%d", p, i))})
			require.NoError(t, err)
		}
	}
	for p := 1; p < 4; p++ {
		recs, err := r.Read(ctx, "t", p, 0, 10)
		require.NoError(t, err, "partition %d", p)
		require.Len(t, recs, p, "partition %d", p)
	}
	appendN(t, w, "t", 5, 5)
	require.Equal(t, int64(10), readAll(t, r, "t", 0))
}

// TestReadOnlyRecreatedUnderAnIterator: an iterator of a topic that is
// deleted and created again under the same name while it reads never
// yields the new topic's records as the old one's.
func TestReadOnlyRecreatedUnderAnIterator(t *testing.T) {
	dir := t.TempDir()
	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.CreateTopic("t", strata.TopicConfig{}))
	appendN(t, w, "t", 0, 5)
	r, err := strata.Open(dir, roOpts())
	require.NoError(t, err)
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	next, stop := iterPull(r.Records(ctx, "t", 0, 0))
	defer stop()
	for i := range 5 {
		rec, err, _ := next()
		require.NoError(t, err)
		require.Equal(t, int64(i), rec.Offset)
	}
	require.NoError(t, w.DeleteTopic("t"))
	require.NoError(t, w.CreateTopic("t", strata.TopicConfig{}))
	for i := range 20 {
		_, err := w.AppendTo(context.Background(), "t", 0, strata.Record{Value: []byte(fmt.Sprintf("new-%d", i))})
		require.NoError(t, err)
	}
	for {
		// Waiting on a topic that is gone until ctx ends is fine too.
		rec, err, ok := next()
		if !ok || err != nil {
			break
		}
		require.NotContains(t, string(rec.Value), "new-", "the old topic's iterator yielded the new topic's record at %d", rec.Offset)
	}
}

// TestReadOnlyRecreatedManyTimes: a reader left open while a topic is
// deleted and created again many times holds the files of at most a few
// of the deleted ones.
func TestReadOnlyRecreatedManyTimes(t *testing.T) {
	dir := t.TempDir()
	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	defer w.Close()
	r, err := strata.Open(dir, roOpts())
	require.NoError(t, err)
	defer r.Close()
	for i := range 30 {
		require.NoError(t, w.CreateTopic("t", strata.TopicConfig{}))
		appendN(t, w, "t", 0, 3)
		require.Equal(t, int64(3), readAll(t, r, "t", 0), "round %d", i)
		require.NoError(t, w.DeleteTopic("t"))
		_, err := r.Read(context.Background(), "t", 0, 0, 1)
		require.Error(t, err, "round %d: a deleted topic", i)
	}
	fds, maps := deletedHeld(t, dir)
	t.Logf("%d descriptors, %d mappings of removed files", fds, maps)
	require.LessOrEqual(t, fds, 4)
	require.LessOrEqual(t, maps, 4)
}
