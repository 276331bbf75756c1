package broker

import (
	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleAddPartitionsToTxn adds partitions to a producer's transaction
// with Store.AddTxnPartitions, opening it if none is open, before the
// producer writes to them (Produce refuses a partition not added with
// INVALID_TXN_STATE). A request is all or nothing: an unknown topic or
// partition gets UNKNOWN_TOPIC_OR_PARTITION and the others
// OPERATION_NOT_ATTEMPTED; a producer's error (PRODUCER_FENCED, or
// INVALID_PRODUCER_EPOCH below v2 (KIP-588) and for a transaction that
// timed out; INVALID_PRODUCER_ID_MAPPING; CONCURRENT_TRANSACTIONS) goes to
// every partition. v4 on, which carries several transactions, is Kafka's
// broker-to-broker form (KIP-890) and is not served.
func handleAddPartitionsToTxn(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AddPartitionsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	var parts []strata.TopicPartition
	bad := map[strata.TopicPartition]bool{}
	for _, rt := range req.Topics {
		d, err := srv.store.DescribeTopic(rt.Topic)
		for _, part := range rt.Partitions {
			tp := strata.TopicPartition{Topic: rt.Topic, Partition: int(part)}
			if err != nil || part < 0 || int(part) >= len(d.Partitions) {
				bad[tp] = true
				continue
			}
			parts = append(parts, tp)
		}
	}
	code := errOperationNotAttempted
	if len(bad) == 0 {
		p := strata.TxnProducer{ID: req.TransactionalID, ProducerID: req.ProducerID, Epoch: req.ProducerEpoch}
		code = txnCodeOf(srv.store.AddTxnPartitions(srv.ctx, p, parts...), req.Version >= 2)
	}
	for _, rt := range req.Topics {
		st := kmsg.NewAddPartitionsToTxnResponseTopic()
		st.Topic = rt.Topic
		for _, part := range rt.Partitions {
			sp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			sp.Partition, sp.ErrorCode = part, code
			if bad[strata.TopicPartition{Topic: rt.Topic, Partition: int(part)}] {
				sp.ErrorCode = errUnknownTopicOrPartition
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
