package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// orderProducer returns a function that appends n records "order <i>"
// to topic in the store, numbered on from the last call, record i to
// partition i%parts.
func orderProducer(t *testing.T, s *strata.Store, topic string, parts int) func(n int) {
	t.Helper()
	next := 0
	return func(n int) {
		t.Helper()
		for range n {
			_, err := s.AppendTo(context.Background(), topic, next%parts, strata.Record{Value: fmt.Appendf(nil, "order %d", next)})
			require.NoError(t, err)
			next++
		}
	}
}

// requireOnce fails unless every value counted was consumed exactly once.
func (c *counter) requireOnce(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for v, n := range c.n {
		require.Equal(t, 1, n, "%s consumed %d times", v, n)
	}
}

// eventuallyCommitted waits until the group's commits reach the end of
// every partition of topic (Store.Lag 0 everywhere).
func eventuallyCommitted(t *testing.T, s *strata.Store, group, topic string) {
	t.Helper()
	eventually(t, "the commits of every record", func() bool {
		lag, err := s.Lag(context.Background(), group, topic)
		require.NoError(t, err)
		for _, pl := range lag {
			if pl.Lag != 0 {
				return false
			}
		}
		return true
	})
}

// eventuallyStoreGroup waits until the store's own consumers may use
// group: its wire members are gone and the claim with them.
func eventuallyStoreGroup(t *testing.T, s *strata.Store, group, topic string) {
	t.Helper()
	eventually(t, "the group to be the store's", func() bool {
		c, err := s.Consumer(group, []string{topic}, strata.ConsumerOptions{})
		if err != nil {
			return false
		}
		require.NoError(t, c.Close())
		return true
	})
}

// counter counts the values consumed.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[v]++
}

func (c *counter) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.n)
}

// eventually polls cond every 10ms until it holds, failing after a
// minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	defer func(start time.Time) { t.Logf("%s: %v", what, time.Since(start)) }(time.Now())
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// groupMember is a member of a group whose partitions a test counts.
type groupMember interface{ owned() int }

// shareAndGiveBack runs two members of group "billing" over "orders" in
// s, parts partitions: the first, alone, consumes the first hundred
// records and owns every partition (then alone runs, if not nil); the
// second joins and they own half each while they consume the second
// hundred; the second stops and the first owns every partition again
// and consumes the third hundred. Every record is consumed once and the
// group's commits reach the end; the first member is still running when
// it returns. start starts a member counting what it consumes in seen
// and returns it with the function that stops it, which the test's
// cleanup calls again.
func shareAndGiveBack(t *testing.T, s *strata.Store, parts int, seen *counter, start func() (groupMember, func()), alone func()) {
	t.Helper()
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: parts}))
	produce := orderProducer(t, s, "orders", parts)
	produce(100)
	a, stopA := start()
	t.Cleanup(stopA)
	eventually(t, "the first member to consume everything", func() bool { return seen.len() == 100 })
	require.Equal(t, parts, a.owned())
	if alone != nil {
		alone()
	}
	b, stopB := start()
	t.Cleanup(stopB)
	eventually(t, "the partitions to be shared", func() bool { return a.owned() == parts/2 && b.owned() == parts/2 })
	produce(100)
	eventually(t, "the second hundred", func() bool { return seen.len() == 200 })
	stopB()
	eventually(t, "the first member to own every partition", func() bool { return a.owned() == parts })
	produce(100)
	eventually(t, "the third hundred", func() bool { return seen.len() == 300 })
	seen.requireOnce(t)
	eventuallyCommitted(t, s, "billing", "orders")
}
