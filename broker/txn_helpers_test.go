package broker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// wireTxn is a transactional producer spoken by hand.
type wireTxn struct {
	t     *testing.T
	c     *rawClient
	id    string
	pid   int64
	epoch int16
}

// newWireTxn initializes transactional id id on c (InitProducerId v4).
func newWireTxn(t *testing.T, c *rawClient, id string) *wireTxn {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.SetVersion(4)
	req.TransactionalID, req.TransactionTimeoutMillis = &id, 60000
	req.ProducerID, req.ProducerEpoch = -1, -1
	resp := c.roundTrip(req).(*kmsg.InitProducerIDResponse)
	require.Equal(t, int16(0), resp.ErrorCode)
	return &wireTxn{t: t, c: c, id: id, pid: resp.ProducerID, epoch: resp.ProducerEpoch}
}

// add adds partitions of topic to the transaction, failing the test
// unless each is accepted.
func (w *wireTxn) add(topic string, parts ...int32) {
	w.t.Helper()
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.SetVersion(3)
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = w.id, w.pid, w.epoch
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic, rt.Partitions = topic, parts
	req.Topics = append(req.Topics, rt)
	resp := w.c.roundTrip(req).(*kmsg.AddPartitionsToTxnResponse)
	for _, p := range resp.Topics[0].Partitions {
		require.Equal(w.t, int16(0), p.ErrorCode)
	}
}

// produce sends a transactional batch of values at seq and returns its
// code and base offset.
func (w *wireTxn) produce(topic string, part, seq int32, values ...string) (int16, int64) {
	w.t.Helper()
	recs := make([]strata.Record, len(values))
	for i, v := range values {
		recs[i] = strata.Record{Value: []byte(v)}
	}
	b, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: time.Now().UnixMilli(),
		Idempotent: true, Transactional: true, ProducerID: w.pid, ProducerEpoch: w.epoch, BaseSequence: seq})
	require.NoError(w.t, err)
	req := produceReq(topic, b)
	req.Topics[0].Partitions[0].Partition = part
	req.TransactionID = &w.id
	sp := w.c.roundTrip(req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	return sp.ErrorCode, sp.BaseOffset
}

// end commits or aborts the transaction and returns EndTxn's code.
func (w *wireTxn) end(commit bool) int16 {
	req := kmsg.NewPtrEndTxnRequest()
	req.SetVersion(3)
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = w.id, w.pid, w.epoch, commit
	return w.c.roundTrip(req).(*kmsg.EndTxnResponse).ErrorCode
}
