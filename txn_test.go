package strata_test

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// openTxnStore opens a store on an in-memory file system with topics a (2
// partitions) and b (1).
func openTxnStore(t *testing.T, fsys vfs.FS, policy strata.SyncPolicy) *strata.Store {
	t.Helper()
	s, err := strata.Open("data", &strata.Options{FS: fsys, Sync: policy, RetentionCheckInterval: -1, CleanerInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	for name, n := range map[string]int{"a": 2, "b": 1} {
		if err := s.CreateTopic(name, strata.TopicConfig{Partitions: n}); err != nil {
			require.ErrorIs(t, err, strata.ErrTopicExists)
		}
	}
	return s
}

func vals(prefix string, n int) []strata.Record {
	recs := make([]strata.Record, n)
	for i := range recs {
		recs[i].Value = fmt.Appendf(nil, "%s%d", prefix, i)
	}
	return recs
}

func strs(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func TestTxnCommitAcrossPartitions(t *testing.T) {
	s := openTxnStore(t, vfs.NewMem(), strata.SyncAlways)
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "relay"})
	require.NoError(t, err)
	require.Equal(t, "relay", tx.ID())
	require.NoError(t, tx.AppendTo(ctx, "a", 0, vals("a0-", 3)...))
	require.NoError(t, tx.AppendTo(ctx, "a", 1, vals("a1-", 2)...))
	require.NoError(t, tx.AppendTo(ctx, "b", 0, vals("b0-", 1)...))

	// Nothing is written before Commit.
	for _, tp := range []strata.TopicPartition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "b", Partition: 0}} {
		end, err := s.ListOffsets(tp.Topic, tp.Partition, strata.Latest)
		require.NoError(t, err)
		require.Zero(t, end)
	}
	require.NoError(t, tx.Commit(ctx))
	for _, c := range []struct {
		topic string
		part  int
		want  []string
	}{{"a", 0, strs("a0-", 3)}, {"a", 1, strs("a1-", 2)}, {"b", 0, strs("b0-", 1)}} {
		v := viewTxns(t, s, c.topic, c.part)
		require.Equal(t, c.want, v.committed, "%s-%d", c.topic, c.part)
		require.Empty(t, v.open)
		require.Equal(t, 1, v.markers)
		p, err := strata.PartitionOf(s, c.topic, c.part)
		require.NoError(t, err)
		require.Equal(t, p.EndOffset(), p.LastStableOffset())
	}
	require.ErrorIs(t, tx.Commit(ctx), strata.ErrTxnDone)
	require.ErrorIs(t, tx.AppendTo(ctx, "a", 0, vals("x", 1)...), strata.ErrTxnDone)
	require.ErrorIs(t, tx.Abort(ctx), strata.ErrTxnDone)
}

func TestTxnAbort(t *testing.T) {
	s := openTxnStore(t, vfs.NewMem(), strata.SyncNever)
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, tx.AppendTo(ctx, "a", 0, vals("gone", 2)...))
	require.NoError(t, tx.Abort(ctx))
	// Held only in memory: an abort writes nothing.
	p, err := strata.PartitionOf(s, "a", 0)
	require.NoError(t, err)
	require.Zero(t, p.EndOffset())

	// Records written early (a full batch) are aborted with a marker.
	tx, err = s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	big := make([]strata.Record, 600)
	for i := range big {
		big[i].Value = make([]byte, 2000)
	}
	require.NoError(t, tx.AppendTo(ctx, "a", 0, big...))
	require.Positive(t, p.EndOffset(), "a full batch is written before Commit")
	require.Less(t, p.LastStableOffset(), p.EndOffset())
	require.NoError(t, tx.Abort(ctx))
	v := viewTxns(t, s, "a", 0)
	require.Empty(t, v.committed)
	require.Empty(t, v.open)
	require.NotEmpty(t, v.aborted)
	require.Equal(t, p.EndOffset(), p.LastStableOffset())
}

func TestTxnEmptyCommitWritesNothing(t *testing.T) {
	s := openTxnStore(t, vfs.NewMem(), strata.SyncAlways)
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	_, err = s.DescribeTopic(strata.TransactionStateTopic)
	require.ErrorIs(t, err, strata.ErrUnknownTopic)
}

func TestBeginTxnFencesTheOpenOne(t *testing.T) {
	s := openTxnStore(t, vfs.NewMem(), strata.SyncEvery(0))
	old, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, old.AppendTo(ctx, "a", 0, vals("old", 1)...))
	pid, epoch := strata.TxnProducerOf(old)

	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	pid2, epoch2 := strata.TxnProducerOf(tx)
	require.Equal(t, pid, pid2, "the id keeps its producer id")
	require.Greater(t, epoch2, epoch)
	require.ErrorIs(t, old.Commit(ctx), strata.ErrProducerFenced)
	require.ErrorIs(t, old.AppendTo(ctx, "a", 0, vals("old", 1)...), strata.ErrProducerFenced)
	require.NoError(t, tx.AppendTo(ctx, "a", 0, vals("new", 1)...))
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, []string{"new0"}, viewTxns(t, s, "a", 0).committed)

	// Another id has another producer id.
	other, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "y"})
	require.NoError(t, err)
	pid3, _ := strata.TxnProducerOf(other)
	require.NotEqual(t, pid, pid3)
}

func TestTxnTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := openTxnStore(t, vfs.NewMem(), strata.SyncNever)
		tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x", Timeout: time.Second})
		require.NoError(t, err)
		big := make([]strata.Record, 600)
		for i := range big {
			big[i].Value = make([]byte, 2000)
		}
		require.NoError(t, tx.AppendTo(ctx, "a", 0, big...))
		p, err := strata.PartitionOf(s, "a", 0)
		require.NoError(t, err)
		require.Less(t, p.LastStableOffset(), p.EndOffset())
		time.Sleep(time.Second + time.Millisecond)
		synctest.Wait()
		require.Equal(t, p.EndOffset(), p.LastStableOffset(), "the store aborted it")
		require.ErrorIs(t, tx.Commit(ctx), strata.ErrTxnTimedOut)
		require.Empty(t, viewTxns(t, s, "a", 0).committed)
		require.NoError(t, s.Close())
	})
}

func TestTxnOptionsChecked(t *testing.T) {
	s := openTxnStore(t, vfs.NewMem(), strata.SyncNever)
	for _, o := range []strata.TxnOptions{
		{},
		{ID: string(make([]byte, 1<<15))},
		{ID: "x", Timeout: 15*time.Minute + time.Millisecond},
		{ID: "x", Timeout: -time.Second},
	} {
		_, err := s.BeginTxn(ctx, o)
		require.ErrorIs(t, err, strata.ErrInvalidConfig)
	}
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x", Timeout: strata.MaxTxnTimeout})
	require.NoError(t, err)
	require.ErrorIs(t, tx.AppendTo(ctx, "a", 5, vals("v", 1)...), strata.ErrUnknownPartition)
	require.ErrorIs(t, tx.AppendTo(ctx, "nope", 0, vals("v", 1)...), strata.ErrUnknownTopic)
	require.ErrorIs(t, tx.AppendTo(ctx, strata.TransactionStateTopic, 0, vals("v", 1)...), strata.ErrReservedTopic)
	require.ErrorIs(t, tx.AppendTo(ctx, "a", 0), strata.ErrNoRecords)
	require.NoError(t, s.Close())
	_, err = s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.ErrorIs(t, err, strata.ErrClosed)
	require.True(t, errors.Is(tx.Commit(ctx), strata.ErrClosed))
}

// TestTxnRecoveredAtOpen leaves transactions in every state a crash can
// leave them in and checks what the next Open makes of them.
func TestTxnOpenAbortsOngoing(t *testing.T) {
	m := vfs.NewMem()
	s := openTxnStore(t, m, strata.SyncAlways)
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	big := make([]strata.Record, 600)
	for i := range big {
		big[i].Value = make([]byte, 2000)
	}
	require.NoError(t, tx.AppendTo(ctx, "a", 0, big...))
	require.NoError(t, s.Close())
	s = openTxnStore(t, m, strata.SyncAlways)
	p, err := strata.PartitionOf(s, "a", 0)
	require.NoError(t, err)
	require.Equal(t, p.EndOffset(), p.LastStableOffset())
	v := viewTxns(t, s, "a", 0)
	require.Empty(t, v.committed)
	require.Empty(t, v.open)
	require.NotEmpty(t, v.aborted, "the batches written early are aborted")
	require.Less(t, len(v.aborted), 600, "the records held in memory were never written")
}

// TestTxnConcurrent commits transactions of several ids from several
// goroutines at once to the same partitions, while others begin
// transactions of one shared id and fence each other: every transaction
// that committed is visible whole, no fenced one is.
func TestTxnConcurrent(t *testing.T) {
	s := openTxnStore(t, vfs.NewMem(), strata.SyncAlways)
	const goroutines, rounds = 4, 20
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		committed = map[string]bool{}
		fenced    = map[string]bool{}
	)
	for g := range goroutines {
		for _, shared := range []bool{false, true} {
			wg.Go(func() {
				id := fmt.Sprintf("own-%d", g)
				if shared {
					id = "shared"
				}
				for i := range rounds {
					v := fmt.Sprintf("%s.%d.%d.%v", id, g, i, shared)
					tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: id})
					if err != nil {
						t.Error(err)
						return
					}
					err = errors.Join(tx.AppendTo(ctx, "a", i%2, strata.Record{Value: []byte(v)}), tx.AppendTo(ctx, "b", 0, strata.Record{Value: []byte(v)}))
					if err == nil {
						err = tx.Commit(ctx)
					}
					mu.Lock()
					switch {
					case err == nil:
						committed[v] = true
					case errors.Is(err, strata.ErrProducerFenced):
						fenced[v] = true
					default:
						t.Error(err)
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	seen := map[string]int{}
	for _, tp := range []strata.TopicPartition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "b", Partition: 0}} {
		v := viewTxns(t, s, tp.Topic, tp.Partition)
		require.Empty(t, v.open)
		for _, val := range v.committed {
			seen[val]++
		}
	}
	for v := range committed {
		require.Equal(t, 2, seen[v], "%s: in both of its partitions", v)
	}
	for v := range fenced {
		require.Zero(t, seen[v], "%s was fenced", v)
	}
	require.Len(t, seen, len(committed))
	require.Equal(t, goroutines*rounds*2, len(committed)+len(fenced))
}

// TestTxnEpochsRunOut begins transactions of one id until its epochs run
// out: the id then gets a new producer id, at epoch 0, as Kafka's
// InitProducerId does.
func TestTxnEpochsRunOut(t *testing.T) {
	s := openTxnStore(t, vfs.NewMem(), strata.SyncNever)
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	pid, epoch := strata.TxnProducerOf(tx)
	require.Zero(t, epoch)
	// Kafka's last epoch is MaxInt16 - 1 (isProducerEpochExhausted).
	for want := 1; want <= math.MaxInt16; want++ {
		require.NoError(t, tx.Abort(ctx))
		tx, err = s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
		require.NoError(t, err)
		p, e := strata.TxnProducerOf(tx)
		if want == math.MaxInt16 {
			require.NotEqual(t, pid, p)
			require.Zero(t, e)
			break
		}
		require.Equal(t, pid, p)
		require.Equal(t, int16(want), e)
	}
	require.NoError(t, tx.AppendTo(ctx, "a", 0, vals("v", 1)...))
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, []string{"v0"}, viewTxns(t, s, "a", 0).committed)
}

// dieAfterTxnSyncs fails every file operation after the n-th fsync of
// __transaction_state's log (from the first one for n = 0).
func dieAfterTxnSyncs(n int64) vfs.Injector {
	var syncs atomic.Int64
	var dead atomic.Bool
	return func(op vfs.Op, path string) error {
		if dead.Load() {
			return vfs.ErrInjected
		}
		if op != vfs.OpSync || !strings.Contains(path, strata.TransactionStateTopic) {
			return nil
		}
		switch k := syncs.Add(1); {
		case k > n:
			dead.Store(true)
			return vfs.ErrInjected
		case k == n:
			dead.Store(true)
		}
		return nil
	}
}

// TestTxnDecidedThenCrashed crashes the machine right after a commit's
// decision is durable, before any marker: Commit says the transaction is
// committed, and the next Open writes its markers.
func TestTxnDecidedThenCrashed(t *testing.T) {
	m := vfs.NewMem()
	s := openTxnStore(t, m, strata.SyncAlways)
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, tx.AppendTo(ctx, "a", 0, vals("a", 2)...))
	require.NoError(t, tx.AppendTo(ctx, "b", 0, vals("b", 1)...))
	m.SetInjector(dieAfterTxnSyncs(1))
	err = tx.Commit(ctx)
	require.ErrorIs(t, err, vfs.ErrInjected)
	require.Contains(t, err.Error(), "is committed")
	after := m.Crash()
	_ = s.Close()

	s = openTxnStore(t, after, strata.SyncAlways)
	require.Equal(t, strs("a", 2), readCommitted(t, s, "a", 0))
	require.Equal(t, strs("b", 1), readCommitted(t, s, "b", 0))
}

// TestTxnCrashedBeforeDecision crashes the machine at the decision's
// fsync: the records are durable, the decision is not, and the next Open
// aborts the transaction.
func TestTxnCrashedBeforeDecision(t *testing.T) {
	m := vfs.NewMem()
	s := openTxnStore(t, m, strata.SyncAlways)
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, tx.AppendTo(ctx, "a", 0, vals("a", 2)...))
	require.NoError(t, tx.AppendTo(ctx, "b", 0, vals("b", 1)...))
	m.SetInjector(dieAfterTxnSyncs(0))
	err = tx.Commit(ctx)
	require.ErrorIs(t, err, vfs.ErrInjected)
	require.Contains(t, err.Error(), "could not be committed")
	after := m.Crash()
	_ = s.Close()

	s = openTxnStore(t, after, strata.SyncAlways)
	for _, tp := range []strata.TopicPartition{{Topic: "a", Partition: 0}, {Topic: "b", Partition: 0}} {
		require.Empty(t, readCommitted(t, s, tp.Topic, tp.Partition))
		v := viewTxns(t, s, tp.Topic, tp.Partition)
		require.NotEmpty(t, v.aborted, "%v: the records were durable, and are aborted", tp)
		require.Empty(t, v.open)
	}
	// The id goes on, at a newer epoch.
	tx, err = s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, tx.AppendTo(ctx, "a", 0, vals("c", 1)...))
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, strs("c", 1), readCommitted(t, s, "a", 0))
}

// TestTxnIDExpires lets a transactional id stay idle past
// TransactionalIDExpiration: retention forgets it (a tombstone, also after
// a restart), and its next transaction has a new producer id, while an id
// used since keeps its own.
func TestTxnIDExpires(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	m := vfs.NewMem()
	opts := &strata.Options{FS: m, Sync: strata.SyncNever, RetentionCheckInterval: -1, CleanerInterval: -1,
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return time.Unix(0, now.Load()) }}
	open := func() *strata.Store {
		s, err := strata.Open("data", opts)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	s := open()
	require.NoError(t, s.CreateTopic("a", strata.TopicConfig{}))
	commit := func(s *strata.Store, id string) (int64, int16) {
		tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: id})
		require.NoError(t, err)
		require.NoError(t, tx.AppendTo(ctx, "a", 0, vals(id, 1)...))
		require.NoError(t, tx.Commit(ctx))
		return strata.TxnProducerOf(tx)
	}
	oldPID, _ := commit(s, "old")
	keptPID, _ := commit(s, "kept")
	now.Add(int64(6 * 24 * time.Hour))
	commit(s, "kept")
	now.Add(int64(2 * 24 * time.Hour))
	_, err := s.EnforceRetention(ctx)
	require.NoError(t, err)

	require.NoError(t, s.Close())
	s = open()
	pid, epoch := commit(s, "old")
	require.NotEqual(t, oldPID, pid, "an expired id starts afresh")
	require.Zero(t, epoch)
	pid, epoch = commit(s, "kept")
	require.Equal(t, keptPID, pid)
	require.Equal(t, int16(2), epoch)
}

// TestTxnMarkerFailureFinishedByNextBegin fails the write of one of a
// commit's markers: Commit says the transaction is committed, the
// partition holds it open, and the id's next BeginTxn writes the marker
// before anything else, as Kafka's coordinator retries its markers.
func TestTxnMarkerFailureFinishedByNextBegin(t *testing.T) {
	m := vfs.NewMem()
	s := openTxnStore(t, m, strata.SyncNever)
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, tx.AppendTo(ctx, "a", 0, vals("a", 1)...))
	require.NoError(t, tx.AppendTo(ctx, "b", 0, vals("b", 1)...))
	var writes atomic.Int64
	m.SetInjector(func(op vfs.Op, path string) error {
		if (op == vfs.OpWrite || op == vfs.OpWriteMap) && strings.HasSuffix(path, "b-0/00000000000000000000.log") && writes.Add(1) == 2 {
			return vfs.ErrInjected // the marker, after the records
		}
		return nil
	})
	err = tx.Commit(ctx)
	require.ErrorIs(t, err, vfs.ErrInjected)
	require.Contains(t, err.Error(), "is committed")
	b, err := strata.PartitionOf(s, "b", 0)
	require.NoError(t, err)
	require.Less(t, b.LastStableOffset(), b.EndOffset(), "b-0 holds the transaction open")
	require.Equal(t, strs("a", 1), readCommitted(t, s, "a", 0))

	tx, err = s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.Equal(t, b.EndOffset(), b.LastStableOffset())
	require.Equal(t, strs("b", 1), readCommitted(t, s, "b", 0))
	require.NoError(t, tx.AppendTo(ctx, "b", 0, vals("c", 1)...))
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, []string{"b0", "c0"}, readCommitted(t, s, "b", 0))
}
