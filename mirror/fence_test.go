package mirror

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/stratalog/strata"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Two mirrors with the same transactional id do not take turns: one of
// them stops with ErrFenced, and the target holds every record once. On
// Kafka the older one stops (its next produce or EndTxn is answered
// PRODUCER_FENCED); kfake answers a fenced EndTxn INVALID_TXN_STATE and lets
// a stale epoch re-initialize, so there the one that first finds the
// other's progress on the target stops.
func TestZombieFenced(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	c := newTarget(t)
	s := newSource(t)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 2}))
	appendKeyed(t, s, "events", 0, 100, 10)
	opts := Options{Brokers: c.ListenAddrs(), Topics: []string{"events"}, BatchRecords: 10,
		PollInterval: time.Millisecond, RetryBackoff: time.Millisecond, Logger: testLogger(t)}

	ms := make([]*Mirror, 2)
	cancels := make([]context.CancelFunc, 2)
	done := make(chan int, 2)
	errs := make([]error, 2)
	run := func(i int) {
		m, err := New(s, opts)
		require.NoError(t, err)
		ms[i] = m
		rctx, cancel := context.WithCancel(ctx)
		cancels[i] = cancel
		go func() { errs[i] = m.Run(rctx); done <- i }()
	}
	run(0)
	defer cancels[0]()
	waitFor(t, func() bool { return ms[0].Stats().Transactions > 0 })
	run(1)
	defer cancels[1]()
	waitFor(t, func() bool { return len(ms[1].Lag()) > 0 })

	// New records until one of them, trying to copy them, finds the
	// other.
	next := 100
	var stopped int
	waitFor(t, func() bool {
		select {
		case stopped = <-done:
			return true
		default:
		}
		appendKeyed(t, s, "events", next, 5, 10)
		next += 5
		return false
	})
	require.ErrorIs(t, errs[stopped], ErrFenced)
	survivor := ms[1-stopped]
	appendKeyed(t, s, "events", next, 50, 10)
	waitFor(t, func() bool { return caughtUp(survivor) })
	cancels[1-stopped]()
	require.Equal(t, 1-stopped, <-done)
	require.NoError(t, errs[1-stopped])
	requireSameRecords(t, s, c.ListenAddrs(), "events", "events")
}

// Group offsets go only to a target group with no active members, and
// only forward.
func TestGroupsOnlyWhenEmpty(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	c := newTarget(t)
	s := newSource(t)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 1}))
	appendKeyed(t, s, "events", 0, 100, 10)
	require.NoError(t, s.Commit("live", "events", 0, 40, ""))
	require.NoError(t, s.Commit("idle", "events", 0, 60, ""))
	opts := Options{Brokers: c.ListenAddrs(), Topics: []string{"events"}, Groups: regexp.MustCompile(".*"),
		RetryBackoff: time.Millisecond, Logger: testLogger(t)}

	// A member of "live" on the target, consuming.
	m, err := New(s, opts)
	require.NoError(t, err)
	require.NoError(t, m.Once(ctx)) // creates the topic; commits both
	requireGroupResumes(t, s, c.ListenAddrs(), "live", "events", "events")
	member, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumerGroup("live"),
		kgo.ConsumeTopics("events"), kgo.DisableAutoCommit())
	require.NoError(t, err)
	defer member.Close()
	waitFor(t, func() bool {
		fs := member.PollRecords(ctx, 1)
		return fs.NumRecords() > 0
	})

	require.NoError(t, s.Commit("live", "events", 0, 70, ""))
	require.NoError(t, s.Commit("idle", "events", 0, 90, ""))
	require.NoError(t, m.Once(ctx))
	require.NotZero(t, m.Stats().GroupsActive)
	requireGroupResumes(t, s, c.ListenAddrs(), "idle", "events", "events")
	got := m.TranslateGroup("live")
	require.Len(t, got, 1)
	require.Equal(t, int64(70), got[0].Source)
	offs := fetchOffsets(t, c.ListenAddrs(), "live")
	require.Equal(t, int64(40), offs, "left alone while the group has members")

	// Backwards at the source: the target keeps its further offset.
	member.Close()
	require.NoError(t, s.Commit("idle", "events", 0, 10, ""))
	require.NoError(t, m.Once(ctx))
	require.Equal(t, int64(90), fetchOffsets(t, c.ListenAddrs(), "idle"))
}

// Without transactions the records arrive all the same (at least once; a
// crash can repeat some, see TestKilledUnderLoad's variant).
func TestNoTransactions(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	c := newTarget(t)
	s := newSource(t)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 3}))
	appendKeyed(t, s, "events", 0, 500, 30)
	require.NoError(t, s.Commit("g", "events", 1, 77, ""))
	m, err := New(s, Options{Brokers: c.ListenAddrs(), Topics: []string{"events"}, NoTransactions: true,
		Groups: regexp.MustCompile("g"), Compression: "zstd", BatchRecords: 100, Logger: testLogger(t)})
	require.NoError(t, err)
	require.NoError(t, m.Once(ctx))
	requireSameRecords(t, s, c.ListenAddrs(), "events", "events")
	requireGroupResumes(t, s, c.ListenAddrs(), "g", "events", "events")
	appendKeyed(t, s, "events", 500, 50, 30)
	require.NoError(t, m.Once(ctx))
	requireSameRecords(t, s, c.ListenAddrs(), "events", "events")
}

func TestOptionsChecked(t *testing.T) {
	s := newSource(t)
	for name, o := range map[string]Options{
		"no brokers":      {Topics: []string{"a"}},
		"no topics":       {Brokers: []string{"x:1"}},
		"bad compression": {Brokers: []string{"x:1"}, Topics: []string{"a"}, Compression: "brotli"},
		"negative batch":  {Brokers: []string{"x:1"}, Topics: []string{"a"}, BatchRecords: -1},
		"negative poll":   {Brokers: []string{"x:1"}, Topics: []string{"a"}, PollInterval: -1},
		"bad replication": {Brokers: []string{"x:1"}, Topics: []string{"a"}, ReplicationFactor: -2},
	} {
		_, err := New(s, o)
		require.ErrorIs(t, err, ErrInvalidOptions, name)
	}
	_, err := New(nil, Options{Brokers: []string{"x:1"}, Topics: []string{"a"}})
	require.ErrorIs(t, err, ErrInvalidOptions)

	// A topic the source does not have stops the mirror at once.
	c := newTarget(t)
	m, err := New(s, Options{Brokers: c.ListenAddrs(), Topics: []string{"nope"}})
	require.NoError(t, err)
	require.ErrorIs(t, m.Once(testCtx(t, 30*time.Second)), strata.ErrUnknownTopic)

	// Once does not wait for a cluster it never reached.
	require.NoError(t, s.CreateTopic("a", strata.TopicConfig{}))
	m, err = New(s, Options{Brokers: []string{"127.0.0.1:1"}, Topics: []string{"a"}})
	require.NoError(t, err)
	err = m.Once(testCtx(t, 60*time.Second))
	require.Error(t, err)
	require.NotErrorIs(t, err, context.DeadlineExceeded)
}

// A mirror stopped in the middle of a transaction aborts it on its way
// out: the target's last stable offset is not held back until the
// transaction times out.
func TestStopAbortsOpenTransaction(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	c := newTarget(t)
	s := newSource(t)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 2}))
	appendKeyed(t, s, "events", 0, 100, 10)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	produced := 0
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		// A transaction's records, then its syncs: the third produce
		// writes the second transaction's records.
		if produced++; produced == 2 {
			cancel()
		}
		return nil, nil, false
	})
	m, err := New(s, Options{Brokers: c.ListenAddrs(), Topics: []string{"events"}, BatchRecords: 10, Logger: testLogger(t)})
	require.NoError(t, err)
	require.NoError(t, m.Run(rctx))

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, "events")
	require.NoError(t, err)
	stable, err := adm.ListCommittedOffsets(ctx, "events")
	require.NoError(t, err)
	written := int64(0)
	ends.Each(func(o kadm.ListedOffset) {
		s, _ := stable.Lookup(o.Topic, o.Partition)
		require.Equal(t, o.Offset, s.Offset, "partition %d: last stable offset behind the end: a transaction left open", o.Partition)
		written += o.Offset
	})
	require.NotZero(t, written, "the stop came after records were written")

	// The next mirror finishes, each record once.
	m, err = New(s, Options{Brokers: c.ListenAddrs(), Topics: []string{"events"}, Logger: testLogger(t)})
	require.NoError(t, err)
	require.NoError(t, m.Once(ctx))
	requireSameRecords(t, s, c.ListenAddrs(), "events", "events")
}
