package broker

import (
	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleDescribeTransactions describes transactional ids (KIP-664) from
// Store.Transactions: state, producer id and epoch, timeout, the start of
// the open transaction (-1 if none) and its partitions. An id the store
// does not know is TRANSACTIONAL_ID_NOT_FOUND.
func handleDescribeTransactions(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	states, err := srv.store.Transactions(srv.ctx)
	byID := make(map[string]*strata.TxnState, len(states))
	for i := range states {
		byID[states[i].ID] = &states[i]
	}
	for _, id := range req.TransactionalIDs {
		ts := kmsg.NewDescribeTransactionsResponseTransactionState()
		ts.TransactionalID, ts.StartTimestamp, ts.ProducerID, ts.ProducerEpoch = id, -1, -1, -1
		st := byID[id]
		switch {
		case err != nil:
			ts.ErrorCode = txnCodeOf(err, true)
		case st == nil:
			ts.ErrorCode = errTransactionalIDNotFound
		default:
			ts.State, ts.TimeoutMillis = st.State, int32(st.Timeout.Milliseconds())
			ts.ProducerID, ts.ProducerEpoch = st.ProducerID, st.Epoch
			if !st.Start.IsZero() {
				ts.StartTimestamp = st.Start.UnixMilli()
			}
			for topic, parts := range byTopic(st.Partitions) {
				t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
				t.Topic, t.Partitions = topic, parts
				ts.Topics = append(ts.Topics, t)
			}
		}
		resp.TransactionStates = append(resp.TransactionStates, ts)
	}
	return resp, nil
}
