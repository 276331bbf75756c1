package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// runConfluentTxn runs testdata/confluent_txn.py's command against addr
// and decodes the JSON it prints into out.
func runConfluentTxn(t *testing.T, python, addr string, out any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{"testdata/confluent_txn.py", addr}, args...)...)
	stdout, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "confluent_txn.py %v: %s", args, stderr)
	require.NoError(t, json.Unmarshal(stdout, out), "confluent_txn.py %v printed %q", args, stdout)
}

// TestConfluentKafkaTransactions runs python3-confluent-kafka's
// transactional producer (librdkafka: init_transactions, then
// begin_transaction, produce, commit_transaction or abort_transaction, in
// turn) over the wire, twice, with the same transactional id, and reads
// the topic back with confluent-kafka under read_committed (the committed
// transactions' records only) and read_uncommitted (all of them), and
// from the store under ReadCommitted and ReadUncommitted.
func TestConfluentKafkaTransactions(t *testing.T) {
	python := lookConfluent(t)
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("txns", strata.TopicConfig{Partitions: 3}))
	addr := srv.Addr().String()

	var committed, all []string
	for range 2 {
		var got struct{ Committed, Aborted []string }
		runConfluentTxn(t, python, addr, &got, "txns", "txns", "py", "6")
		require.Len(t, got.Committed, 9)
		require.Len(t, got.Aborted, 9)
		committed = append(committed, got.Committed...)
		all = append(all, got.Committed...)
		all = append(all, got.Aborted...)
	}
	sort.Strings(committed)
	sort.Strings(all)
	require.Equal(t, committed, storeValues(t, s, "txns", strata.ReadCommitted))
	require.Equal(t, all, storeValues(t, s, "txns", strata.ReadUncommitted))
	for iso, want := range map[string][]string{"read_committed": committed, "read_uncommitted": all} {
		var got struct{ Values []string }
		runConfluentTxn(t, python, addr, &got, "read", "txns", iso)
		sort.Strings(got.Values)
		require.Equal(t, want, got.Values, iso)
	}
}

// TestConfluentKafkaEOS runs librdkafka's consume-transform-produce loop
// (testdata/confluent_txn.py eos): a read_committed consumer of a group
// and a transactional producer that sends the consumer's offsets with
// each transaction (send_offsets_to_transaction: AddOffsetsToTxn, then
// TxnOffsetCommit with the member's id and generation), every third
// transaction aborted and its records read again from the group's
// offsets. A first process stops part way; a second, of the same
// transactional id, goes on from the group's offsets to the end. Every
// input record's output is there once under read_committed, and the
// group's offsets are at the end of the input.
func TestConfluentKafkaEOS(t *testing.T) {
	python := lookConfluent(t)
	s, srv := serve(t, nil)
	ctx := context.Background()
	require.NoError(t, s.CreateTopic("in", strata.TopicConfig{Partitions: 3}))
	require.NoError(t, s.CreateTopic("out", strata.TopicConfig{Partitions: 2}))
	var inputs, want []string
	for i := range 90 {
		v := fmt.Sprintf("r%02d", i)
		_, err := s.AppendTo(ctx, "in", i%3, strata.Record{Value: []byte(v)})
		require.NoError(t, err)
		inputs, want = append(inputs, v), append(want, v+":out")
	}
	addr := srv.Addr().String()
	var done []string
	for _, limit := range []string{"30", "0"} {
		var got struct {
			Committed    []string
			Transactions int
		}
		runConfluentTxn(t, python, addr, &got, "eos", "in", "out", "eos", "relay", limit)
		require.Greater(t, got.Transactions, 2, "some aborted")
		done = append(done, got.Committed...)
	}
	sort.Strings(done)
	require.Equal(t, inputs, done, "each input committed once")
	require.Equal(t, want, storeValues(t, s, "out", strata.ReadCommitted))
	require.Greater(t, len(storeValues(t, s, "out", strata.ReadUncommitted)), len(want), "the aborted transactions' records are there")
	var read struct{ Values []string }
	runConfluentTxn(t, python, addr, &read, "read", "out", "read_committed")
	sort.Strings(read.Values)
	require.Equal(t, want, read.Values)
	for p := range 3 {
		om, ok := s.Committed("eos", "in", p)
		require.True(t, ok)
		require.Equal(t, int64(30), om.Offset, "partition %d", p)
	}
}

// TestConfluentKafkaRequireStable: librdkafka's read_committed group
// consumer, which asks for stable offsets, joins while a transaction holds
// its group's offsets (UNSTABLE_OFFSET_COMMIT), retries until the
// transaction commits, and starts from the offsets it committed: the
// eos loop finds nothing left to read.
func TestConfluentKafkaRequireStable(t *testing.T) {
	python := lookConfluent(t)
	proxy := newKeyCountingProxy(t)
	s, srv := serve(t, &broker.Options{AdvertisedAddr: proxy.addr()})
	proxy.serveTo(srv.Addr().String())
	ctx := context.Background()
	require.NoError(t, s.CreateTopic("in", strata.TopicConfig{Partitions: 2}))
	require.NoError(t, s.CreateTopic("out", strata.TopicConfig{}))
	for i := range 20 {
		_, err := s.AppendTo(ctx, "in", i%2, strata.Record{Value: fmt.Appendf(nil, "r%02d", i)})
		require.NoError(t, err)
	}
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "earlier"})
	require.NoError(t, err)
	require.NoError(t, s.AddTxnPartitions(ctx, p))
	require.NoError(t, s.CommitTxnOffsets(ctx, p, "eos", map[strata.TopicPartition]strata.OffsetAndMetadata{
		{Topic: "in"}: {Offset: 10}, {Topic: "in", Partition: 1}: {Offset: 10}}))
	ended := make(chan error, 1)
	go func() {
		// librdkafka sends its second OffsetFetch after the answer to
		// the first, which the transaction's offsets make
		// UNSTABLE_OFFSET_COMMIT.
		deadline := time.Now().Add(time.Minute)
		for proxy.count(kmsg.OffsetFetch) < 2 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		ended <- s.EndTxn(ctx, p, true)
	}()
	var got struct {
		Committed    []string
		Transactions int
	}
	runConfluentTxn(t, python, proxy.addr(), &got, "eos", "in", "out", "eos", "relay", "0")
	require.NoError(t, <-ended)
	require.GreaterOrEqual(t, proxy.count(kmsg.OffsetFetch), int64(2), "the consumer asked for its offsets once only")
	t.Logf("%d OffsetFetch requests", proxy.count(kmsg.OffsetFetch))
	require.Empty(t, got.Committed, "the consumer started from the transaction's offsets")
	require.Zero(t, got.Transactions)
}
