package mirror

import (
	"regexp"
	"testing"
	"time"

	"github.com/stratalog/strata"
	"github.com/stretchr/testify/require"
)

// The mirror reads a store opened ReadOnly beside the one that owns the
// directory and appends: it copies what the owner published, and the
// owner's group commits, followed as they land.
func TestReadOnlySource(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	c := newTarget(t)
	dir := t.TempDir()
	owner, err := strata.Open(dir, &strata.Options{CleanerInterval: -1, RetentionCheckInterval: -1})
	require.NoError(t, err)
	defer owner.Close()
	require.NoError(t, owner.CreateTopic("events", strata.TopicConfig{Partitions: 2}))
	appendKeyed(t, owner, "events", 0, 200, 9)
	require.NoError(t, owner.Commit("app", "events", 1, 40, ""))

	ro, err := strata.Open(dir, &strata.Options{ReadOnly: true})
	require.NoError(t, err)
	defer ro.Close()
	m, err := New(ro, Options{Brokers: c.ListenAddrs(), Topics: []string{"events"}, Groups: regexp.MustCompile("app"), Logger: testLogger(t)})
	require.NoError(t, err)
	require.NoError(t, m.Once(ctx))
	requireSameRecords(t, owner, c.ListenAddrs(), "events", "events")
	requireGroupResumes(t, owner, c.ListenAddrs(), "app", "events", "events")

	appendKeyed(t, owner, "events", 200, 100, 9)
	require.NoError(t, owner.Commit("app", "events", 0, 70, ""))
	waitFor(t, func() bool { // the reader follows the owner
		for p := range 2 {
			end, err := ro.ListOffsets("events", p, strata.Latest)
			require.NoError(t, err)
			want, err := owner.ListOffsets("events", p, strata.Latest)
			require.NoError(t, err)
			if end != want {
				return false
			}
		}
		om, ok := ro.Committed("app", "events", 0)
		return ok && om.Offset == 70
	})
	require.NoError(t, m.Once(ctx))
	requireSameRecords(t, owner, c.ListenAddrs(), "events", "events")
	requireGroupResumes(t, owner, c.ListenAddrs(), "app", "events", "events")
}
