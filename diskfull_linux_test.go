package strata_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/stratalog/strata"
)

// mountTmpfs mounts a tmpfs of size bytes on a temporary directory and
// unmounts it when the test ends. It skips the test unless it runs as root
// where mounting works.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(size)); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { require.NoError(t, unix.Unmount(dir, unix.MNT_DETACH)) })
	return dir
}

// fill writes the file at path until the disk is full, or until it holds
// limit bytes.
func fill(t *testing.T, path string, limit int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	page := make([]byte, 4096)
	for n := 0; n < limit; n += len(page) {
		if _, err := f.Write(page); err != nil {
			require.ErrorIs(t, err, syscall.ENOSPC)
			return
		}
	}
}

// fullDiskRecord is record id of the full-disk tests: its value, of size
// bytes, is derived from id.
func fullDiskRecord(id, size int) strata.Record {
	v := bytes.Repeat(fmt.Appendf(nil, "%d;", id), 1+size/(len(strconv.Itoa(id))+1))[:size]
	return strata.Record{Key: []byte(strconv.Itoa(id)), Value: v}
}

// requireRecords reads the topic's partition 0 from its start and checks
// that it holds exactly the records of ids 0 to n-1, of the sizes given.
func requireRecords(t *testing.T, s *strata.Store, sizes []int) {
	t.Helper()
	got, err := s.Read(ctx, "events", 0, 0, len(sizes)+1)
	require.NoError(t, err)
	require.Len(t, got, len(sizes))
	for id, r := range got {
		want := fullDiskRecord(id, sizes[id])
		require.Equal(t, int64(id), r.Offset)
		require.Equal(t, want.Key, r.Key, "offset %d", id)
		require.Equal(t, want.Value, r.Value, "offset %d", id)
	}
}

// requireFull checks that an append failed for want of space, and did not
// close the partition.
func requireFull(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NotErrorIs(t, err, strata.ErrClosed, "a full disk does not close the partition")
}

// logBuffer collects what a store logs, from any goroutine.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Contains(l.b.String(), s)
}

// fullDiskOptions fsyncs every append, so that each one also flushes what
// a roll sealed (and checkpoints the recovery point).
func fullDiskOptions(w io.Writer) *strata.Options {
	return &strata.Options{Sync: strata.SyncAlways, Logger: slog.New(slog.NewTextHandler(w, nil))}
}

// TestDiskFull runs a store on an 8 MiB tmpfs, with 256 KiB segments, and
// fills the disk (a filler file takes most of it) under a segment whose
// .log has its room reserved. The segment fills up and rolls: without
// preallocation the new segment's files are sparse and the roll works, but
// the checkpoint of the recovery point after it cannot be written; with
// preallocation the roll cannot reserve the new segment. Either way appends
// fail with ENOSPC, and keep failing with it, the partition not being
// closed. Once the filler is removed, appends go on across rolls. Then a
// new segment with a few small records meets a full disk, and Close returns
// nil or ENOSPC, never a memory fault. Reopened, the store holds every
// acknowledged record, intact.
func TestDiskFull(t *testing.T) {
	for _, prealloc := range []bool{false, true} {
		t.Run(fmt.Sprintf("preallocate=%v", prealloc), func(t *testing.T) {
			diskFull(t, prealloc)
		})
	}
}

func diskFull(t *testing.T, prealloc bool) {
	dir := mountTmpfs(t, 8<<20)
	path := filepath.Join(dir, "store")
	filler := filepath.Join(dir, "filler")
	logs := &logBuffer{}
	s, err := strata.Open(path, fullDiskOptions(logs))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() }) // if the test fails midway
	cfg := strata.TopicConfig{Partitions: 1, SegmentBytes: 256 << 10, Preallocate: prealloc}
	require.NoError(t, s.CreateTopic("events", cfg))
	var sizes []int // of the acknowledged records: id = offset = index
	add := func(size int) error {
		_, err := s.AppendTo(ctx, "events", 0, fullDiskRecord(len(sizes), size))
		if err == nil {
			sizes = append(sizes, size)
		}
		return err
	}
	rolls := func() int64 { return s.Stats().Topics["events"][0].Rolls }
	// Past half a segment, whose .log is then reserved whole.
	for rolls() == 0 {
		require.NoError(t, add(1000))
	}
	for range 140 {
		require.NoError(t, add(1000))
	}

	fill(t, filler, 8<<20)
	before := rolls()
	for err = add(1000); err == nil; err = add(1000) {
	}
	requireFull(t, err)
	if !prealloc {
		require.Greater(t, rolls(), before, "the segment rolled on the full disk")
		require.Eventually(t, func() bool { return logs.contains("recovery-point.tmp") }, 5*time.Second, time.Millisecond,
			"the flush after the roll tries to checkpoint, and cannot")
	}
	for range 3 {
		requireFull(t, add(1000))
	}

	require.NoError(t, os.Remove(filler))
	before = rolls()
	for rolls() < before+3 {
		require.NoError(t, add(1000), "appends go on once there is space")
	}
	requireRecords(t, s, sizes)

	// A new segment that holds a few small records, no index entry yet.
	before = rolls()
	for rolls() == before {
		require.NoError(t, add(1000))
	}
	require.NoError(t, add(100))
	require.NoError(t, add(100))
	fill(t, filler, 8<<20)
	if err := s.Close(); err != nil {
		require.ErrorIs(t, err, syscall.ENOSPC)
		require.NotContains(t, err.Error(), "memory fault")
	}

	require.NoError(t, os.Remove(filler))
	s, err = strata.Open(path, fullDiskOptions(logs))
	require.NoError(t, err)
	requireRecords(t, s, sizes)
	require.NoError(t, add(1000), "the reopened store takes appends")
	require.NoError(t, s.Close())
}

// TestCloseOnDiskFull fills a tmpfs under a store whose only segment holds
// a few small records (no index entry yet): Close must seal it, which
// writes its time index's last entry, without a memory fault in the sparse
// index file, and the reopened store holds the records.
func TestCloseOnDiskFull(t *testing.T) {
	dir := mountTmpfs(t, 1<<20)
	path := filepath.Join(dir, "store")
	s, err := strata.Open(path, fullDiskOptions(io.Discard))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() }) // if the test fails midway
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 1}))
	sizes := []int{100, 100, 100}
	for id, size := range sizes {
		_, err := s.AppendTo(ctx, "events", 0, fullDiskRecord(id, size))
		require.NoError(t, err)
	}
	filler := filepath.Join(dir, "filler")
	fill(t, filler, 1<<20)
	if err := s.Close(); err != nil {
		require.ErrorIs(t, err, syscall.ENOSPC)
		require.NotContains(t, err.Error(), "memory fault")
	}

	require.NoError(t, os.Remove(filler))
	s, err = strata.Open(path, fullDiskOptions(io.Discard))
	require.NoError(t, err)
	requireRecords(t, s, sizes)
	require.NoError(t, s.Close())
}
