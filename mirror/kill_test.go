package mirror

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratalog/strata"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// loadSource appends to the source until stop is closed: keyed batches to
// every partition of topic, transactions of which every third aborts, and
// commits of group "app" that move forward. It returns when stop closes.
func loadSource(s *strata.Store, topic string, stop <-chan struct{}) error {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; ; i++ {
		select {
		case <-stop:
			return nil
		default:
		}
		n := 1 + rng.IntN(30)
		if err := appendRecords(s, topic, i*100, n, 40); err != nil {
			return err
		}
		if i%4 == 3 {
			txn, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "app"})
			if err != nil {
				return err
			}
			if err := txn.Append(ctx, topic, strata.Record{Key: fmt.Appendf(nil, "t%d", i),
				Value: []byte("in a transaction"), Timestamp: time.UnixMilli(tsBase)}); err != nil {
				return err
			}
			if i%3 == 0 {
				err = txn.Abort(ctx)
			} else {
				err = txn.Commit(ctx)
			}
			if err != nil {
				return err
			}
		}
		if i%5 == 4 {
			d, err := s.DescribeTopic(topic)
			if err != nil {
				return err
			}
			p := rng.IntN(len(d.Partitions))
			at := d.Partitions[p].EndOffset - int64(rng.IntN(3))
			if om, ok := s.Committed("app", topic, p); (!ok || om.Offset < at) && at >= 0 {
				if err := s.Commit("app", topic, p, at, fmt.Sprint("at ", i)); err != nil {
					return err
				}
			}
		}
		if i == 60 {
			if err := s.CreatePartitions(topic, 5); err != nil {
				return err
			}
		}
		// The compacted topic: keys written over and over, one written
		// once now and then, cleaned often, so that what the mirror
		// reads has gaps; and the group's position on it.
		if err := appendRecords(s, "users", i*100, 1+rng.IntN(8), 6); err != nil {
			return err
		}
		if i%3 == 0 {
			if err := appendRecords(s, "users", i*100+50, 1, 0); err != nil {
				return err
			}
		}
		if i%7 == 6 {
			if _, err := s.Compact(ctx, "users"); err != nil {
				return err
			}
			d, err := s.DescribeTopic("users")
			if err != nil {
				return err
			}
			p := rng.IntN(len(d.Partitions))
			at := d.Partitions[p].StartOffset + rng.Int64N(d.Partitions[p].EndOffset-d.Partitions[p].StartOffset+1)
			if om, ok := s.Committed("app", "users", p); !ok || om.Offset < at {
				if err := s.Commit("app", "users", p, at, ""); err != nil {
					return err
				}
			}
		}
		time.Sleep(time.Millisecond) // let the mirror interleave
	}
}

// The mirror copies while the source appends, is killed at random requests
// (its context cancelled as the cluster handles a produce, an EndTxn, an
// offset commit ...), and meets produce errors, produce timeouts after the
// write (a dropped answer) and closed connections; mirrors restarted each
// time resume from the target's progress. Afterwards the target holds
// exactly the source's records, in order, and the group resumes at its
// record.
func TestKilledUnderLoad(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	c := newTarget(t)
	s := newSource(t)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 3}))
	require.NoError(t, s.CreateTopic("users", strata.TopicConfig{Partitions: 2, CleanupPolicy: strata.CleanupCompact,
		SegmentBytes: 4096, MinCleanableDirtyRatio: 0.01}))

	var cancelMu sync.Mutex
	var cancelCur context.CancelFunc
	var kills, drops atomic.Int64
	rng := rand.New(rand.NewPCG(3, 4))
	var rngMu sync.Mutex
	chance := func(n int) bool {
		rngMu.Lock()
		defer rngMu.Unlock()
		return rng.IntN(n) == 0
	}
	var disturb atomic.Bool
	disturb.Store(true)
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if !disturb.Load() {
			return nil, nil, false
		}
		switch req.Key() {
		case int16(kmsg.Produce), int16(kmsg.EndTxn), int16(kmsg.InitProducerID), int16(kmsg.OffsetCommit), int16(kmsg.Fetch):
		default:
			return nil, nil, false
		}
		if chance(25) {
			cancelMu.Lock()
			if cancelCur != nil {
				cancelCur()
				kills.Add(1)
			}
			cancelMu.Unlock()
		}
		if req.Key() != int16(kmsg.Fetch) && chance(30) {
			drops.Add(1)
			return nil, errors.New("connection closed"), true
		}
		return nil, nil, false
	})
	faults := c.Fault(kfake.Fault{
		Keys:  []kmsg.Key{kmsg.Produce},
		Err:   kerr.RequestTimedOut, // written, then answered with a timeout
		Count: -1,
		When:  func(kmsg.Request) bool { return chance(8) },
	}, kfake.Fault{
		Keys:  []kmsg.Key{kmsg.Produce},
		Err:   kerr.NotLeaderForPartition, // refused
		Count: -1,
		When:  func(kmsg.Request) bool { return chance(10) },
	})

	stop := make(chan struct{})
	loaded := make(chan error, 1)
	go func() { loaded <- loadSource(s, "events", stop) }()

	opts := Options{
		Brokers:       c.ListenAddrs(),
		TopicPattern:  regexp.MustCompile("ev.*|users"),
		Groups:        regexp.MustCompile("app"),
		BatchRecords:  50,
		PollInterval:  time.Millisecond,
		GroupInterval: 5 * time.Millisecond,
		TopicInterval: 5 * time.Millisecond,
		RetryBackoff:  time.Millisecond,
		Logger:        testLogger(t),
	}
	// A refused produce makes kgo refresh metadata, at most every
	// MetadataMinAge (5 s by default).
	opts.ClientOptions = []kgo.Opt{kgo.MetadataMinAge(10 * time.Millisecond)}
	if os.Getenv("MIRROR_DEBUG") != "" {
		opts.ClientOptions = append(opts.ClientOptions, kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelDebug, nil)))
	}
	copied := int64(0)
	for runs := 0; runs < 300 && (runs < 40 || copied < 5000); runs++ {
		m, err := New(s, opts)
		require.NoError(t, err)
		// Killed at a random request, or at the latest after a while.
		rngMu.Lock()
		d := time.Duration(20+rng.IntN(300)) * time.Millisecond
		rngMu.Unlock()
		rctx, cancel := context.WithTimeout(ctx, d)
		cancelMu.Lock()
		cancelCur = cancel
		cancelMu.Unlock()
		err = m.Run(rctx)
		cancel()
		require.NoError(t, err)
		require.NoError(t, ctx.Err(), "the test ran out of time")
		copied += m.Stats().Records
	}
	close(stop)
	require.NoError(t, <-loaded)
	disturb.Store(false)
	cancelMu.Lock()
	cancelCur = nil
	cancelMu.Unlock()
	faults.Remove()
	t.Logf("kills %d, closed connections %d, faults %d, records copied %d", kills.Load(), drops.Load(), faults.Hits(), copied)

	// A last mirror, undisturbed, finishes.
	m, err := New(s, opts)
	require.NoError(t, err)
	require.NoError(t, m.Once(ctx))
	for _, l := range m.Lag() {
		require.Zero(t, l.Lag, "%+v", l)
	}
	d, err := s.DescribeTopic("events")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 5, "partitions added during the run")
	requireSameRecords(t, s, c.ListenAddrs(), "events", "events")
	requireGroupResumes(t, s, c.ListenAddrs(), "app", "events", "events")
	requireCompactedCopy(t, s, c.ListenAddrs(), "users", "app")
	gaps := 0
	for _, recs := range sourceRecords(t, s, "users") {
		for i := 1; i < len(recs); i++ {
			if recs[i].Offset != recs[i-1].Offset+1 {
				gaps++
			}
		}
	}
	require.NotZero(t, gaps, "compaction left gaps in users")
}
