package strata_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// TestOpenSurvivesDamagedSideFiles damages or removes one side file of a
// partition (an index, a checkpoint) and reopens the store, after a clean
// Close and with the clean-shutdown marker removed to force recovery: Open
// succeeds, every record reads back intact at its offset, appends work, and
// a warning names the file.
func TestOpenSurvivesDamagedSideFiles(t *testing.T) {
	const n = 300
	segmentName := func(base int64, suffix string) string { return fmt.Sprintf("%020d%s", base, suffix) }
	for _, tc := range []struct {
		name      string
		compacted bool
		// damage changes the partition directory and returns the name of
		// the file that the warning must name.
		damage func(t *testing.T, dir string, bases []int64) string
	}{
		{"missing sealed .index", false, removeSideFile(func(b []int64) string { return segmentName(b[1], ".index") })},
		{"missing active .index", false, removeSideFile(func(b []int64) string { return segmentName(b[len(b)-1], ".index") })},
		{"missing sealed .timeindex", false, removeSideFile(func(b []int64) string { return segmentName(b[1], ".timeindex") })},
		{"missing active .timeindex", false, removeSideFile(func(b []int64) string { return segmentName(b[len(b)-1], ".timeindex") })},
		{"garbled log-start-offset", false, writeSideFile("log-start-offset", "\x00garbage")},
		{"log-start-offset past the end", false, writeSideFile("log-start-offset", "99999999")},
		{"garbled recovery-point", false, writeSideFile("recovery-point", "1O0")},
		{"garbled cleaner-offset", true, writeSideFile("cleaner-offset", "-")},
	} {
		for _, clean := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/clean=%v", tc.name, clean), func(t *testing.T) {
				dir := t.TempDir()
				opts := &strata.Options{Sync: strata.SyncNever, CleanerInterval: -1, RetentionCheckInterval: -1}
				s, err := strata.Open(dir, opts)
				require.NoError(t, err)
				cfg := strata.TopicConfig{SegmentBytes: 4096, IndexIntervalBytes: 256}
				if tc.compacted {
					cfg.CleanupPolicy = strata.CleanupCompact
					cfg.MinCleanableDirtyRatio = -1
				}
				require.NoError(t, s.CreateTopic("events", cfg))
				for i := range n {
					_, err := s.AppendTo(ctx, "events", 0, rec(fmt.Sprint("key-", i), fmt.Sprint("value-", i)))
					require.NoError(t, err)
				}
				if tc.compacted {
					_, err := s.Compact(ctx, "events")
					require.NoError(t, err)
				}
				require.NoError(t, s.Close())

				part := filepath.Join(dir, "events-0")
				bases := partitionSegmentBases(t, part)
				require.Greater(t, len(bases), 3)
				file := tc.damage(t, part, bases)
				if !clean {
					require.NoError(t, os.Remove(filepath.Join(dir, ".clean-shutdown")))
				}

				logs := &warnRecorder{}
				opts.Logger = slog.New(logs)
				s, err = strata.Open(dir, opts)
				require.NoError(t, err)
				requireEventRecords(t, s, n)
				_, err = s.AppendTo(ctx, "events", 0, rec("key-new", "value-new"))
				require.NoError(t, err)
				got, err := s.Read(ctx, "events", 0, n, 1)
				require.NoError(t, err)
				require.Len(t, got, 1)
				require.Equal(t, "value-new", string(got[0].Value))
				if tc.compacted {
					_, err := s.Compact(ctx, "events")
					require.NoError(t, err)
				}
				require.True(t, logs.mention(file), "a warning names %s; warnings: %q", file, logs.all())
				require.NoError(t, s.Close())

				s, err = strata.Open(dir, opts)
				require.NoError(t, err)
				requireEventRecords(t, s, n)
				require.NoError(t, s.Close())
			})
		}
	}
}

// requireEventRecords checks that partition 0 of topic events holds exactly the
// records key-i → value-i at offset i for i < n, from offset 0 on, and then
// at most the one appended after the damage.
func requireEventRecords(t *testing.T, s *strata.Store, n int) {
	t.Helper()
	d, err := s.DescribeTopic("events")
	require.NoError(t, err)
	require.Zero(t, d.Partitions[0].StartOffset)
	var recs []strata.Record
	for len(recs) < n {
		got, err := s.Read(ctx, "events", 0, int64(len(recs)), n-len(recs))
		require.NoError(t, err)
		require.NotEmpty(t, got, "records end at %d", len(recs))
		recs = append(recs, got...)
	}
	for i, r := range recs {
		require.Equal(t, int64(i), r.Offset)
		require.Equal(t, fmt.Sprint("key-", i), string(r.Key))
		require.Equal(t, fmt.Sprint("value-", i), string(r.Value))
	}
}

// partitionSegmentBases lists the base offsets of the segments in a partition
// directory, in order.
func partitionSegmentBases(t *testing.T, dir string) []int64 {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	require.NoError(t, err)
	bases := make([]int64, len(logs))
	for i, name := range logs {
		_, err := fmt.Sscanf(filepath.Base(name), "%020d.log", &bases[i])
		require.NoError(t, err)
	}
	return bases
}

// removeSideFile returns a damage that removes the file name(bases).
func removeSideFile(name func(bases []int64) string) func(*testing.T, string, []int64) string {
	return func(t *testing.T, dir string, bases []int64) string {
		file := name(bases)
		require.NoError(t, os.Remove(filepath.Join(dir, file)))
		return file
	}
}

// writeSideFile returns a damage that writes contents into the file name.
func writeSideFile(name, contents string) func(*testing.T, string, []int64) string {
	return func(t *testing.T, dir string, _ []int64) string {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(contents), 0o644))
		return name
	}
}

// warnRecorder is a slog.Handler that keeps the text of every record at level
// Warn or above (message and attributes; attributes added by With are not
// kept).
type warnRecorder struct {
	mu   sync.Mutex
	logs []string
}

func (w *warnRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (w *warnRecorder) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return nil
	}
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	w.logs = append(w.logs, b.String())
	return nil
}

func (w *warnRecorder) WithAttrs([]slog.Attr) slog.Handler { return w }

func (w *warnRecorder) WithGroup(string) slog.Handler { return w }

// mention reports whether a warning contains s.
func (w *warnRecorder) mention(s string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.logs {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

func (w *warnRecorder) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.logs...)
}
