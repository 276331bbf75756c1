//go:build linux

package strata_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
	"github.com/stratalog/strata/topic"
)

// TestCreateTopicBeyondTheFileLimit: a topic with more partitions than the
// process can hold files open for failed after seconds with "too many open
// files" and left thousands of directories behind. It is refused at once,
// with the numbers, and leaves nothing.
func TestCreateTopicBeyondTheFileLimit(t *testing.T) {
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	open, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	lowered := lim
	lowered.Cur = uint64(len(open) + 2000)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lowered))
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })

	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	start := time.Now()
	err = s.CreateTopic("big", strata.TopicConfig{Partitions: topic.MaxPartitions})
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
	require.Contains(t, err.Error(), "RLIMIT_NOFILE")
	require.Less(t, time.Since(start), 2*time.Second, "refused before anything is created")
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range names {
		require.False(t, strings.HasPrefix(e.Name(), "big-"), "nothing is left behind: %s", e.Name())
	}
	require.NotContains(t, s.Topics(), "big")

	// What fits is created.
	require.NoError(t, s.CreateTopic("fits", strata.TopicConfig{Partitions: 200}))
	_, err = os.Stat(filepath.Join(dir, "fits-199"))
	require.NoError(t, err)
}

// TestMemTopicOfMaxPartitions: an in-memory store holds no descriptor
// per file, so the process's open-file limit does not cap its topics: a
// topic of the most partitions a topic may have is created, and used,
// with room for only 2000 more files.
func TestMemTopicOfMaxPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 65536 partitions")
	}
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	open, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	lowered := lim
	lowered.Cur = uint64(len(open) + 2000)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lowered))
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })

	s := stratatest.Open(t, nil)
	const n = topic.MaxPartitions
	require.NoError(t, s.EnsureTopic("big", strata.TopicConfig{Partitions: n}))
	_, err = s.AppendTo(t.Context(), "big", n-1, strata.Record{Value: []byte("v")})
	require.NoError(t, err)
	r, err := s.Get("big", n-1, 0)
	require.NoError(t, err)
	require.Equal(t, "v", string(r.Value))
	_, err = s.AppendTo(t.Context(), "big", n, strata.Record{Value: []byte("v")})
	require.ErrorIs(t, err, strata.ErrUnknownPartition)
}
