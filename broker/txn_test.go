package broker_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// txnClient is a kgo transactional producer of id to srv.
func txnClient(t *testing.T, srv *broker.Server, id string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(srv.Addr().String()), kgo.TransactionalID(id),
		kgo.DefaultProduceTopic("out"), kgo.RecordRetries(3)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

// produceTxn produces values in one transaction of cl, to partition
// by key, and ends it.
func produceTxn(ctx context.Context, t *testing.T, cl *kgo.Client, commit bool, values ...string) {
	t.Helper()
	require.NoError(t, cl.BeginTransaction())
	for _, v := range values {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Key: []byte(v), Value: []byte(v)}).FirstErr())
	}
	require.NoError(t, cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)))
}

// consumeAll reads every record of topic with kgo at an isolation level
// until it has want records, and returns their values sorted.
func consumeAll(ctx context.Context, t *testing.T, srv *broker.Server, topic string, iso kgo.IsolationLevel, want int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(iso))
	require.NoError(t, err)
	defer cl.Close()
	var got []string
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "got %d of %d records", len(got), want)
		fs.EachError(func(topic string, p int32, err error) { require.NoError(t, err, "%s-%d", topic, p) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	sort.Strings(got)
	return got
}

// storeValues reads every record of topic from the store at iso.
func storeValues(t *testing.T, s *strata.Store, topic string, iso strata.Isolation) []string {
	t.Helper()
	d, err := s.DescribeTopic(topic)
	require.NoError(t, err)
	var got []string
	for p := range d.Partitions {
		for r, err := range s.View(iso).Scan(topic, p, 0) {
			require.NoError(t, err)
			got = append(got, string(r.Value))
		}
	}
	sort.Strings(got)
	return got
}

// TestKgoTransactions produces with kgo in transactions over the wire,
// committed and aborted, and reads them back with kgo under
// read_committed (only the committed ones) and read_uncommitted (all),
// and from the store under ReadCommitted.
func TestKgoTransactions(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("out", strata.TopicConfig{Partitions: 3}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := txnClient(t, srv, "tx")
	var committed, all []string
	for i := range 6 {
		var vs []string
		for j := range 5 {
			vs = append(vs, fmt.Sprintf("t%d-r%d", i, j))
		}
		commit := i%2 == 0
		produceTxn(ctx, t, cl, commit, vs...)
		all = append(all, vs...)
		if commit {
			committed = append(committed, vs...)
		}
	}
	sort.Strings(committed)
	sort.Strings(all)
	require.Equal(t, committed, storeValues(t, s, "out", strata.ReadCommitted))
	require.Equal(t, all, storeValues(t, s, "out", strata.ReadUncommitted))
	require.Equal(t, all, consumeAll(ctx, t, srv, "out", kgo.ReadUncommitted(), len(all)))
	// read_committed: the committed records, then the end: a marker past
	// the last aborted one says nothing more is coming.
	require.Equal(t, committed, consumeAll(ctx, t, srv, "out", kgo.ReadCommitted(), len(committed)))
}

// TestKgoTxnZombieFenced: a second producer of the same transactional id
// fences the first; the first's open transaction is aborted, and its
// next produce or commit fails with a fencing error, never committing.
func TestKgoTxnZombieFenced(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("out", strata.TopicConfig{}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	zombie := txnClient(t, srv, "tx")
	require.NoError(t, zombie.BeginTransaction())
	require.NoError(t, zombie.ProduceSync(ctx, &kgo.Record{Value: []byte("zombie")}).FirstErr())

	fresh := txnClient(t, srv, "tx")
	produceTxn(ctx, t, fresh, true, "fresh")

	err := zombie.ProduceSync(ctx, &kgo.Record{Value: []byte("zombie 2")}).FirstErr()
	if err == nil {
		err = zombie.EndTransaction(ctx, kgo.TryCommit)
	}
	require.Error(t, err)
	require.True(t, isFenced(err), "%v", err)
	require.Equal(t, []string{"fresh"}, storeValues(t, s, "out", strata.ReadCommitted))
}

// isFenced reports whether err is one of the errors of a fenced producer.
func isFenced(err error) bool {
	for _, ke := range []*kerr.Error{kerr.ProducerFenced, kerr.InvalidProducerEpoch, kerr.InvalidProducerIDMapping} {
		if errors.Is(err, ke) {
			return true
		}
	}
	return false
}

// TestKgoTxnTimeout: a transaction open past kgo's TransactionTimeout is
// aborted by the store; the client's commit of it fails, nothing of it is
// read under read_committed, and the client's next transaction, once it
// has aborted the failed one, commits.
func TestKgoTxnTimeout(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("out", strata.TopicConfig{}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := txnClient(t, srv, "tx", kgo.TransactionTimeout(200*time.Millisecond))
	require.NoError(t, cl.BeginTransaction())
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte("late")}).FirstErr())
	for {
		end, err := s.ListOffsets("out", 0, strata.Latest)
		require.NoError(t, err)
		lso, err := s.View(strata.ReadCommitted).ListOffsets("out", 0, strata.Latest)
		require.NoError(t, err)
		if lso == end {
			break
		}
		require.NoError(t, ctx.Err(), "the store never aborted the transaction")
		time.Sleep(10 * time.Millisecond)
	}
	err := cl.EndTransaction(ctx, kgo.TryCommit)
	require.Error(t, err)
	t.Logf("commit after the timeout: %v", err)
	require.True(t, isFenced(err), "%v", err)
	require.NoError(t, cl.EndTransaction(ctx, kgo.TryAbort))
	produceTxn(ctx, t, cl, true, "again")
	require.Equal(t, []string{"again"}, storeValues(t, s, "out", strata.ReadCommitted))
}

// TestKgoTxnAndBeginTxnFenceEachOther: a Store.BeginTxn of a kgo
// producer's transactional id aborts and fences the producer's open
// transaction, and the producer, started again, fences the Txn in turn;
// the records of neither fenced transaction are read under
// read_committed.
func TestKgoTxnAndBeginTxnFenceEachOther(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("out", strata.TopicConfig{}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wire := txnClient(t, srv, "tx")
	require.NoError(t, wire.BeginTransaction())
	require.NoError(t, wire.ProduceSync(ctx, &kgo.Record{Value: []byte("wire fenced")}).FirstErr())

	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "tx"})
	require.NoError(t, err)
	err = wire.EndTransaction(ctx, kgo.TryCommit)
	require.True(t, isFenced(err), "%v", err)
	require.NoError(t, tx.AppendTo(ctx, "out", 0, strata.Record{Value: []byte("txn")}))
	require.NoError(t, tx.Commit(ctx))

	tx2, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "tx"})
	require.NoError(t, err)
	require.NoError(t, tx2.AppendTo(ctx, "out", 0, strata.Record{Value: []byte("txn fenced")}))
	again := txnClient(t, srv, "tx")
	produceTxn(ctx, t, again, true, "wire")
	require.ErrorIs(t, tx2.Commit(ctx), strata.ErrProducerFenced)
	require.Equal(t, []string{"txn", "wire"}, storeValues(t, s, "out", strata.ReadCommitted))
	require.Equal(t, []string{"txn", "wire"}, consumeAll(ctx, t, srv, "out", kgo.ReadCommitted(), 2))
}

// TestKgoTxnAcrossRestart: transactions kgo committed and aborted are
// read back the same after the store is closed and opened again, and one
// left open at Close is aborted; the producer then starts again on the new
// server and commits.
func TestKgoTxnAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncAlways})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("out", strata.TopicConfig{Partitions: 2}))
	srv, err := broker.Start(s, &broker.Options{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := txnClient(t, srv, "tx")
	produceTxn(ctx, t, cl, true, "a", "b")
	produceTxn(ctx, t, cl, false, "c")
	produceTxn(ctx, t, cl, true, "d")
	require.NoError(t, cl.BeginTransaction())
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Key: []byte("e"), Value: []byte("e")}).FirstErr())
	cl.Close()
	require.NoError(t, srv.Close())
	require.NoError(t, s.Close())

	s, err = strata.Open(dir, &strata.Options{Sync: strata.SyncAlways})
	require.NoError(t, err)
	srv, err = broker.Start(s, &broker.Options{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		require.NoError(t, s.Close())
	})
	require.Equal(t, []string{"a", "b", "d"}, storeValues(t, s, "out", strata.ReadCommitted))
	require.Equal(t, []string{"a", "b", "c", "d", "e"}, storeValues(t, s, "out", strata.ReadUncommitted))
	require.Equal(t, []string{"a", "b", "d"}, consumeAll(ctx, t, srv, "out", kgo.ReadCommitted(), 3))
	cl = txnClient(t, srv, "tx")
	produceTxn(ctx, t, cl, true, "f")
	require.Equal(t, []string{"a", "b", "d", "f"}, storeValues(t, s, "out", strata.ReadCommitted))
}

// relayInput appends n records "in-<i>" to "in", record i to partition
// i%parts, and returns the relay's expected output, "out of in-<i>" in
// order, and a function that tells whether group "relays" has committed
// the end of every partition of "in".
func relayInput(t *testing.T, s *strata.Store, n, parts int) (want []string, done func() bool) {
	t.Helper()
	for i := range n {
		v := fmt.Sprintf("in-%04d", i)
		_, err := s.AppendTo(context.Background(), "in", i%parts, strata.Record{Value: []byte(v)})
		require.NoError(t, err)
		want = append(want, "out of "+v)
	}
	return want, func() bool {
		for p := range parts {
			om, ok := s.Committed("relays", "in", p)
			if !ok || om.Offset < int64(n/parts) {
				return false
			}
		}
		return true
	}
}

// TestKgoGroupTransactSession runs kgo's GroupTransactSession, a
// consume-transform-produce loop: it consumes "in" in a group (JoinGroup,
// SyncGroup over the wire), produces a record to "out" per record read,
// and commits the group's offsets in the same transaction
// (AddOffsetsToTxn, TxnOffsetCommit with its member and generation), every
// third transaction aborted and its records read again. At the end "out"
// holds, under read_committed, each input record's output exactly once,
// and the group's committed offsets (Store.Committed) are the input's
// ends.
func TestKgoGroupTransactSession(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("in", strata.TopicConfig{Partitions: 2}))
	require.NoError(t, s.CreateTopic("out", strata.TopicConfig{Partitions: 2}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 200
	want, done := relayInput(t, s, n, 2)
	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(srv.Addr().String()), kgo.TransactionalID("relay"),
		kgo.ConsumerGroup("relays"), kgo.ConsumeTopics("in"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DefaultProduceTopic("out"), kgo.FetchMaxBytes(1000))
	require.NoError(t, err)
	defer sess.Close()
	for round := 0; !done(); round++ {
		require.NoError(t, ctx.Err(), "the session never committed the input's end")
		fs := sess.PollFetches(ctx)
		fs.EachError(func(topic string, p int32, err error) { require.NoError(t, err, "%s-%d", topic, p) })
		if fs.NumRecords() == 0 {
			continue
		}
		require.NoError(t, sess.Begin())
		fs.EachRecord(func(r *kgo.Record) {
			sess.Produce(ctx, &kgo.Record{Value: append([]byte("out of "), r.Value...)}, nil)
		})
		committed, err := sess.End(ctx, kgo.TransactionEndTry(round%3 != 2))
		require.NoError(t, err)
		t.Logf("round %d: %d records, committed %v", round, fs.NumRecords(), committed)
	}
	require.Equal(t, want, storeValues(t, s, "out", strata.ReadCommitted))
	require.Equal(t, want, consumeAll(ctx, t, srv, "out", kgo.ReadCommitted(), n))
}

// TestKgoGroupTransactSessionsRebalance runs two GroupTransactSessions,
// of two transactional ids, in one group over "in", the second joining
// while the first is at work (a rebalance that moves partitions between
// them mid-stream; a session whose generation moved on has its
// TxnOffsetCommit refused and aborts). Under read_committed, "out" holds
// each input record's output exactly once.
func TestKgoGroupTransactSessionsRebalance(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("in", strata.TopicConfig{Partitions: 4}))
	require.NoError(t, s.CreateTopic("out", strata.TopicConfig{Partitions: 2}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 2000
	want, done := relayInput(t, s, n, 4)
	var commits [2]atomic.Int32 // by each session
	run := func(i int, id string, started chan<- struct{}) error {
		sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(srv.Addr().String()), kgo.TransactionalID(id),
			kgo.ConsumerGroup("relays"), kgo.ConsumeTopics("in"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DefaultProduceTopic("out"), kgo.FetchMaxBytes(2000),
			kgo.Balancers(kgo.CooperativeStickyBalancer()))
		if err != nil {
			return err
		}
		defer sess.Close()
		for round := 0; !done(); round++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			// Bounded, so that a session left with nothing to read
			// sees the other one finish.
			pollCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			fs := sess.PollRecords(pollCtx, 50)
			cancel()
			if err := fs.Err0(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			if fs.NumRecords() == 0 {
				continue
			}
			if err := sess.Begin(); err != nil {
				return err
			}
			fs.EachRecord(func(r *kgo.Record) {
				sess.Produce(ctx, &kgo.Record{Value: append([]byte("out of "), r.Value...)}, nil)
			})
			committed, err := sess.End(ctx, kgo.TryCommit)
			if err != nil {
				return err
			}
			if committed {
				commits[i].Add(1)
			}
			if round == 3 && started != nil {
				close(started)
				started = nil
			}
		}
		return nil
	}
	started := make(chan struct{})
	errs := make(chan error, 2)
	go func() { errs <- run(0, "relay-a", started) }()
	go func() {
		select {
		case <-started:
		case <-ctx.Done():
		}
		errs <- run(1, "relay-b", nil)
	}()
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	t.Logf("transactions committed: %d and %d", commits[0].Load(), commits[1].Load())
	require.NotZero(t, commits[1].Load(), "the second session did some of the work")
	require.Equal(t, want, storeValues(t, s, "out", strata.ReadCommitted))
}

// TestKadmTransactions: kadm's DescribeTransactions and ListTransactions
// (KIP-664) see a kgo producer's open transaction (Ongoing, its
// partition, its start) and a BeginTxn's committed one; an unknown id is
// TRANSACTIONAL_ID_NOT_FOUND, and ListTransactions filters by state and
// producer id.
func TestKadmTransactions(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("out", strata.TopicConfig{Partitions: 2}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "billing"})
	require.NoError(t, err)
	require.NoError(t, tx.AppendTo(ctx, "out", 1, strata.Record{Value: []byte("invoice")}))
	require.NoError(t, tx.Commit(ctx))
	wire := txnClient(t, srv, "relay", kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, wire.BeginTransaction())
	require.NoError(t, wire.ProduceSync(ctx, &kgo.Record{Value: []byte("open"), Partition: 0}).FirstErr())

	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	described, err := adm.DescribeTransactions(ctx, "relay", "billing", "missing")
	require.NoError(t, err)
	relay := described["relay"]
	require.NoError(t, relay.Err)
	require.Equal(t, "Ongoing", relay.State)
	require.Equal(t, kadm.TopicsSet{"out": {0: {}}}, relay.Topics)
	require.Greater(t, relay.StartTimestamp, int64(0))
	require.Equal(t, int32(0), relay.Coordinator)
	billing := described["billing"]
	require.NoError(t, billing.Err)
	require.Equal(t, "CompleteCommit", billing.State)
	require.Equal(t, int64(-1), billing.StartTimestamp)
	require.Empty(t, billing.Topics)
	require.ErrorIs(t, described["missing"].Err, kerr.TransactionalIDNotFound)

	listed, err := adm.ListTransactions(ctx, nil, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"billing", "relay"}, listed.TransactionalIDs())
	listed, err = adm.ListTransactions(ctx, nil, []string{"Ongoing"})
	require.NoError(t, err)
	require.Equal(t, []string{"relay"}, listed.TransactionalIDs())
	listed, err = adm.ListTransactions(ctx, []int64{billing.ProducerID}, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"billing"}, listed.TransactionalIDs())
	require.NoError(t, wire.EndTransaction(ctx, kgo.TryAbort))
}
