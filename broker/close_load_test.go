package broker_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// TestServerCloseUnderLoad closes a Server while kgo transactional
// producers run transactions, kgo group consumers consume and commit and
// a client waits in JoinGroup: Close returns promptly. A second Server on
// the same store then serves new producers of the same transactional
// ids, which abort what the first left open: under read_committed every
// transaction acknowledged committed is there, each one whole, at most
// one more per id (the one whose acknowledgement Close cut off), and no
// partition holds a transaction open; the store's consumers may use the
// group.
func TestServerCloseUnderLoad(t *testing.T) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("out", strata.TopicConfig{Partitions: 3}))
	srv, err := broker.Start(s, &broker.Options{Addr: "127.0.0.1:0"})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	ids := []string{"tx0", "tx1"}
	var producers []*kgo.Client
	for _, id := range ids {
		cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.TransactionalID(id),
			kgo.DefaultProduceTopic("out"), kgo.RecordRetries(1), kgo.RequestRetries(1))
		require.NoError(t, err)
		producers = append(producers, cl)
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				if cl.BeginTransaction() != nil {
					return
				}
				name := fmt.Sprintf("%s.%d", id, n)
				ok := true
				for i := range 2 {
					if cl.ProduceSync(ctx, &kgo.Record{Key: []byte(name), Value: fmt.Appendf(nil, "%s.%d", name, i)}).FirstErr() != nil {
						ok = false
					}
				}
				if cl.EndTransaction(ctx, kgo.TransactionEndTry(ok)) != nil {
					return
				}
				if ok {
					mu.Lock()
					acked[name] = true
					mu.Unlock()
				}
			}
		})
	}
	var seen counter
	var consumers []*groupConsumer
	for range 3 {
		consumers = append(consumers, startGroupConsumerOf(t, srv, "billing", "out", kgo.CooperativeStickyBalancer(), &seen, new(atomic.Int64)))
	}
	waiting := dial(t, srv)
	waiting.async(joinReq(3, "other", "", nil, "range"))
	waiting.async(joinReq(3, "other", "", nil, "range")) // a second member: the first's JoinGroup waits

	eventually(t, "some transactions", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 10
	})
	closed := make(chan error, 1)
	go func() { closed <- srv.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return")
	}
	cancel()
	for _, cl := range producers {
		cl.Close() // fails what it still holds for the server gone
	}
	wg.Wait()
	for _, c := range consumers {
		c.stop()
	}

	srv2, err := broker.Start(s, &broker.Options{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	defer srv2.Close()
	for _, id := range ids {
		cl := txnClient(t, srv2, id)
		produceTxn(context.Background(), t, cl, true, id+".last")
		acked[id+".last"] = true
	}
	visible := map[string]int{}
	for _, v := range storeValues(t, s, "out", strata.ReadCommitted) {
		if strings.HasSuffix(v, ".last") {
			visible[v] += 2
			continue
		}
		visible[v[:strings.LastIndex(v, ".")]]++
	}
	extra := map[string]int{}
	for name, n := range visible {
		require.Equal(t, 2, n, "%s whole", name)
		if !acked[name] {
			extra[name[:strings.Index(name, ".")]]++
		}
	}
	for name := range acked {
		require.Contains(t, visible, name)
	}
	for id, n := range extra {
		require.LessOrEqual(t, n, 1, "%s: transactions committed but not acknowledged", id)
	}
	for p := range 3 {
		hw, err := s.ListOffsets("out", p, strata.Latest)
		require.NoError(t, err)
		lso, err := s.View(strata.ReadCommitted).ListOffsets("out", p, strata.Latest)
		require.NoError(t, err)
		require.Equal(t, hw, lso, "partition %d: nothing open", p)
	}
	c, err := s.Consumer("billing", []string{"out"}, strata.ConsumerOptions{})
	require.NoError(t, err)
	require.NoError(t, c.Close())
}
