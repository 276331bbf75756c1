package broker

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnStateNames are Kafka's names of the states a transactional id can be
// in, which ListTransactions filters by.
var txnStateNames = []string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

// handleListTransactions lists the transactional ids the store knows
// (KIP-664) from Store.Transactions, with their producer ids and states,
// filtered by state names (an unknown one is listed in
// UnknownStateFilters), producer ids and, from v1, a least time open
// (KIP-994: only transactions open longer). v2's pattern of ids is not
// served.
func handleListTransactions(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	for _, f := range req.StateFilters {
		if !slices.Contains(txnStateNames, f) {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, f)
		}
	}
	states, err := srv.store.Transactions(srv.ctx)
	if err != nil {
		resp.ErrorCode = txnCodeOf(err, true)
		return resp, nil
	}
	now := time.Now()
	for _, st := range states {
		switch {
		case len(req.StateFilters) > 0 && !slices.Contains(req.StateFilters, st.State),
			len(req.ProducerIDFilters) > 0 && !slices.Contains(req.ProducerIDFilters, st.ProducerID),
			req.Version >= 1 && req.DurationFilterMillis >= 0 &&
				(st.Start.IsZero() || now.Sub(st.Start) <= time.Duration(req.DurationFilterMillis)*time.Millisecond):
			continue
		}
		ts := kmsg.NewListTransactionsResponseTransactionState()
		ts.TransactionalID, ts.ProducerID, ts.TransactionState = st.ID, st.ProducerID, st.State
		resp.TransactionStates = append(resp.TransactionStates, ts)
	}
	return resp, nil
}
