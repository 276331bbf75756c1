package strata

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"
)

// TxnState is the state of a transactional id, as Kafka's
// DescribeTransactions and ListTransactions give it (KIP-664).
type TxnState struct {
	ID string // the transactional id
	// State is Kafka's name of the id's state: Empty, Ongoing,
	// PrepareCommit, PrepareAbort, CompleteCommit or CompleteAbort. A Txn
	// of BeginTxn's is Ongoing once it has written to a partition (its
	// records are held until then), a TxnProducer's once it has added
	// one.
	State      string
	ProducerID int64
	Epoch      int16
	Timeout    time.Duration // of its transactions
	// Start is when the open transaction began (Options.Now's clock),
	// zero if none is open.
	Start time.Time
	// Partitions are those of the open transaction, sorted;
	// __consumer_offsets's partition 0 stands for its offsets.
	Partitions []TopicPartition
}

// Transactions returns the state of every transactional id the store
// knows (that has a producer id), sorted by id. It waits, as long as ctx
// allows, for a call of an id that is under way (a Commit, say). Ids
// forgotten by expiry (Options.TransactionalIDExpiration) are not listed.
func (s *Store) Transactions(ctx context.Context) (_ []TxnState, err error) {
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.txns.states(ctx)
}

// states is Transactions.
func (c *txnCoordinator) states(ctx context.Context) ([]TxnState, error) {
	if err := c.ensureLoaded(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	entries := slices.Collect(maps.Values(c.ids))
	c.mu.Unlock()
	slices.SortFunc(entries, func(a, b *txnEntry) int { return strings.Compare(a.id, b.id) })
	out := make([]TxnState, 0, len(entries))
	for _, e := range entries {
		if err := e.lock(ctx); err != nil {
			return nil, err
		}
		m := e.meta
		if !e.gone && m.ProducerID >= 0 {
			st := TxnState{ID: e.id, State: m.State.String(), ProducerID: m.ProducerID, Epoch: m.ProducerEpoch, Timeout: m.Timeout}
			if m.State.Open() {
				st.Start = m.Start
				for _, p := range m.Partitions {
					st.Partitions = append(st.Partitions, TopicPartition{Topic: p.Topic, Partition: int(p.Partition)})
				}
			}
			out = append(out, st)
		}
		e.unlock()
	}
	return out, nil
}
