package broker

import (
	"context"
	"errors"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleProduce appends each partition's batch with Store.AppendBatch,
// which validates it (as Kafka's LogValidator does) and stores it as it
// came, compressed or not, and checks an idempotent producer's sequence.
// Every partition gets its own error code; a bad topic or batch never
// closes the connection. A LogAppendTime topic's append time is in the
// response, as Kafka gives it. acks 0 gets no response; 1 and -1 (all) are
// answered once the batches are written (fsynced under SyncAlways): the
// one broker is every replica.
//
// A partition's records must be one RecordBatch of magic 2: legacy
// messages (Produce v0-v2 carry nothing else) are
// UNSUPPORTED_FOR_MESSAGE_FORMAT. A request with a transactional id
// appends its transactional batches to the producer's open transaction
// (produceTxn); a transactional batch without one is INVALID_TXN_STATE.
func handleProduce(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ProduceRequest)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	acks := req.Acks
	badAcks := acks != 0 && acks != 1 && acks != -1
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
			switch {
			case badAcks:
				sp.ErrorCode = errInvalidRequiredAcks
			default:
				if req.TransactionID != nil {
					sp.ErrorCode, sp.BaseOffset = srv.produceTxn(*req.TransactionID, rt.Topic, rp.Partition, rp.Records)
				} else {
					sp.ErrorCode, sp.BaseOffset = srv.produce(rt.Topic, rp.Partition, rp.Records)
				}
				if sp.ErrorCode == errNone {
					sp.LogAppendTime = logAppendTime(rp.Records)
					sp.LogStartOffset, _ = srv.store.View(strata.ReadUncommitted).ListOffsets(rt.Topic, int(rp.Partition), strata.Earliest)
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if acks == 0 {
		return nil, nil
	}
	return resp, nil
}

// produce appends one partition's records and returns the error code and
// the batch's base offset.
func (srv *Server) produce(topic string, part int32, records []byte) (int16, int64) {
	base, _, err := srv.store.AppendBatch(context.Background(), topic, int(part), records)
	switch {
	case err == nil:
		return errNone, base
	case errors.Is(err, strata.ErrInvalidProducer):
		if h, herr := log.ReadHeader(records); herr == nil && h.IsTransactional() && !h.IsControl() {
			return errInvalidTxnState, -1
		}
	}
	return codeOf(err), -1
}

// logAppendTime returns the time a LogAppendTime topic stamped an appended
// batch with (AppendBatch writes it into the batch), -1 for a CreateTime
// batch, as Kafka answers.
func logAppendTime(batch []byte) int64 {
	h, err := log.ReadHeader(batch)
	if err != nil || h.TimestampType() != log.LogAppendTime {
		return -1
	}
	return h.MaxTimestamp
}
