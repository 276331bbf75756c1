package broker_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
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
