package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// TestTxnErrorCodes checks the codes of the transaction APIs, request by
// request, with what each leaves in the store.
func TestTxnErrorCodes(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 2}))
	c := dial(t, srv)
	id := "tx"

	initPID := func(version int16, id string, timeoutMs int32, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.SetVersion(version)
		req.TransactionalID, req.TransactionTimeoutMillis = &id, timeoutMs
		req.ProducerID, req.ProducerEpoch = pid, epoch
		return c.roundTrip(req).(*kmsg.InitProducerIDResponse)
	}
	addParts := func(version int16, pid int64, epoch int16, topic string, parts ...int32) []int16 {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.SetVersion(version)
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = topic, parts
		req.Topics = append(req.Topics, rt)
		resp := c.roundTrip(req).(*kmsg.AddPartitionsToTxnResponse)
		var codes []int16
		for _, p := range resp.Topics[0].Partitions {
			codes = append(codes, p.ErrorCode)
		}
		return codes
	}
	produce := func(pid int64, epoch int16, seq int32, part int32) int16 {
		b, err := log.EncodeBatch(nil, []strata.Record{{Value: []byte("v")}}, log.BatchOptions{Now: time.Now().UnixMilli(),
			Idempotent: true, Transactional: true, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq})
		require.NoError(t, err)
		req := produceReq("events", b)
		req.Topics[0].Partitions[0].Partition = part
		req.TransactionID = &id
		return c.roundTrip(req).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
	}
	endTxn := func(version int16, pid int64, epoch int16, commit bool) int16 {
		req := kmsg.NewPtrEndTxnRequest()
		req.SetVersion(version)
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, commit
		return c.roundTrip(req).(*kmsg.EndTxnResponse).ErrorCode
	}
	txnCommit := func(version int16, pid int64, epoch int16, group string, offset int64) int16 {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.SetVersion(version)
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = id, group, pid, epoch
		req.Generation = -1
		return c.txnOffsetCommit(req, "events", offset)
	}

	require.Equal(t, int16(50), initPID(4, id, 0, -1, -1).ErrorCode, "INVALID_TRANSACTION_TIMEOUT")
	require.Equal(t, int16(50), initPID(4, id, 16*60*1000, -1, -1).ErrorCode, "INVALID_TRANSACTION_TIMEOUT")
	require.Equal(t, int16(42), initPID(4, "", 1000, -1, -1).ErrorCode, "INVALID_REQUEST")
	first := initPID(4, id, 60000, -1, -1)
	require.Equal(t, int16(0), first.ErrorCode)
	pid, epoch := first.ProducerID, first.ProducerEpoch

	require.Equal(t, int16(48), produce(pid, epoch, 0, 0), "INVALID_TXN_STATE: no transaction open")
	require.Equal(t, int16(48), endTxn(1, pid, epoch, true), "INVALID_TXN_STATE: no transaction open")
	require.Equal(t, int16(48), txnCommit(3, pid, epoch, "g", 0), "INVALID_TXN_STATE: no transaction open")
	require.Equal(t, []int16{0}, addParts(0, pid, epoch, "events", 0))
	require.Equal(t, []int16{3}, addParts(0, pid, epoch, "missing", 0), "UNKNOWN_TOPIC_OR_PARTITION")
	require.Equal(t, []int16{55, 3}, addParts(0, pid, epoch, "events", 1, 9), "OPERATION_NOT_ATTEMPTED beside the bad one")
	require.Equal(t, int16(48), produce(pid, epoch, 0, 1), "INVALID_TXN_STATE: partition 1 not added")
	require.Equal(t, int16(0), produce(pid, epoch, 0, 0))
	require.Equal(t, int16(49), endTxn(1, pid+1, epoch, true), "INVALID_PRODUCER_ID_MAPPING")
	require.Equal(t, int16(24), txnCommit(3, pid, epoch, "", 1), "INVALID_GROUP_ID")
	require.Equal(t, int16(1), txnCommit(3, pid, epoch, "g", 9), "OFFSET_OUT_OF_RANGE")
	require.Equal(t, int16(0), txnCommit(3, pid, epoch, "g", 1))
	require.Equal(t, int16(0), endTxn(1, pid, epoch, true))
	require.Equal(t, int16(0), endTxn(1, pid, epoch, true), "a retry")
	require.Equal(t, int16(48), endTxn(1, pid, epoch, false), "INVALID_TXN_STATE: the other decision")
	om, ok := s.Committed("g", "events", 0)
	require.True(t, ok)
	require.Equal(t, int64(1), om.Offset)

	// A second producer of the id fences the first.
	second := initPID(4, id, 60000, -1, -1)
	require.Equal(t, int16(0), second.ErrorCode)
	require.Equal(t, pid, second.ProducerID)
	require.Equal(t, epoch+1, second.ProducerEpoch)
	require.Equal(t, []int16{90}, addParts(2, pid, epoch, "events", 0), "PRODUCER_FENCED")
	require.Equal(t, []int16{47}, addParts(1, pid, epoch, "events", 0), "INVALID_PRODUCER_EPOCH below v2")
	require.Equal(t, int16(90), endTxn(2, pid, epoch, true), "PRODUCER_FENCED")
	require.Equal(t, int16(47), endTxn(1, pid, epoch, true), "INVALID_PRODUCER_EPOCH below v2")
	require.Equal(t, int16(47), produce(pid, epoch, 1, 0), "INVALID_PRODUCER_EPOCH")
	require.Equal(t, int16(90), initPID(4, id, 60000, pid, epoch).ErrorCode, "PRODUCER_FENCED: an old epoch")
	require.Equal(t, int16(49), initPID(4, id, 60000, pid+1, 0).ErrorCode, "INVALID_PRODUCER_ID_MAPPING")
	bumped := initPID(4, id, 60000, pid, epoch+1)
	require.Equal(t, int16(0), bumped.ErrorCode, "KIP-360: the current epoch bumps")
	require.Equal(t, epoch+2, bumped.ProducerEpoch)
	require.Equal(t, []string{"v"}, storeValues(t, s, "events", strata.ReadCommitted))

	// A group with a member over the wire: a commit of another member,
	// or at another generation, is refused; one that names only the
	// group is the group's.
	assigned := make(chan struct{}, 1)
	member, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.ConsumerGroup("joined"), kgo.ConsumeTopics("events"),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case assigned <- struct{}{}:
			default:
			}
		}))
	require.NoError(t, err)
	defer member.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go member.PollFetches(ctx)
	select {
	case <-assigned:
	case <-ctx.Done():
		t.Fatal("the consumer never joined")
	}
	memberID, generation := member.GroupMetadata()
	p2, e2 := bumped.ProducerID, bumped.ProducerEpoch
	require.Equal(t, []int16{0}, addParts(3, p2, e2, "events", 0))
	commitAs := func(memberID string, generation int32) int16 {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.SetVersion(3)
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = id, "joined", p2, e2
		req.MemberID, req.Generation = memberID, generation
		return c.txnOffsetCommit(req, "events", 1)
	}
	require.Equal(t, int16(25), commitAs("stranger", generation), "UNKNOWN_MEMBER_ID")
	require.Equal(t, int16(22), commitAs(memberID, generation+1), "ILLEGAL_GENERATION")
	require.Equal(t, int16(0), commitAs(memberID, generation))
	require.Equal(t, int16(0), commitAs("", -1), "the group's, whatever its members")

	// The transactional id's coordinator is node 0.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.SetVersion(3)
	fc.CoordinatorKey, fc.CoordinatorType = id, 1
	fresp := c.roundTrip(fc).(*kmsg.FindCoordinatorResponse)
	require.Equal(t, int16(0), fresp.ErrorCode)
	require.Equal(t, int32(0), fresp.NodeID)
}
