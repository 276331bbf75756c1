package broker_test

import (
	"context"
	"encoding/binary"
	"fmt"
	stdlog "log"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
	"github.com/stratalog/strata/log"
)

// batch encodes a client's batch of n records.
func batch(t *testing.T, n int) []byte {
	t.Helper()
	recs := make([]strata.Record, n)
	for i := range recs {
		recs[i].Value = fmt.Appendf(nil, "v%d", i)
	}
	b, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: time.Now().UnixMilli()})
	require.NoError(t, err)
	return b
}

func produceReq(topic string, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(7)
	req.Acks = -1
	req.TimeoutMillis = 1000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// TestProduceErrorCodes checks each bad partition gets Kafka's code and
// the connection stays open for the next request.
func TestProduceErrorCodes(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{MaxBatchBytes: 1024}))
	c := dial(t, srv)
	corrupt := batch(t, 2)
	corrupt[len(corrupt)-1] ^= 0xff // the CRC covers it
	legacy := batch(t, 1)
	legacy[16] = 1 // magic
	txn, err := log.EncodeBatch(nil, []strata.Record{{Value: []byte("v")}},
		log.BatchOptions{Now: time.Now().UnixMilli(), Idempotent: true, ProducerID: 1, Transactional: true})
	require.NoError(t, err)
	tests := []struct {
		name    string
		topic   string
		records []byte
		code    int16
	}{
		{"unknown topic", "missing", batch(t, 1), 3},
		{"internal topic", "__consumer_offsets", batch(t, 1), 17},
		{"invalid topic name", "a/b", batch(t, 1), 17},
		{"bad CRC", "events", corrupt, 2},
		{"cut short", "events", batch(t, 1)[:40], 2},
		{"over max.message.bytes", "events", batch(t, 300), 10},
		{"legacy magic", "events", legacy, 43},
		{"transactional", "events", txn, 48},
		{"ok", "events", batch(t, 2), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := c.roundTrip(produceReq(tt.topic, tt.records)).(*kmsg.ProduceResponse)
			require.Equal(t, tt.code, resp.Topics[0].Partitions[0].ErrorCode)
		})
	}
	t.Run("transactional id without a producer", func(t *testing.T) {
		req := produceReq("events", txn)
		id := "txn"
		req.TransactionID = &id
		resp := c.roundTrip(req).(*kmsg.ProduceResponse)
		require.Equal(t, int16(49), resp.Topics[0].Partitions[0].ErrorCode, "INVALID_PRODUCER_ID_MAPPING")
	})
	end, err := s.ListOffsets("events", 0, strata.Latest)
	require.NoError(t, err)
	require.Equal(t, int64(2), end, "only the good batch")
}

// TestBadFramesClose checks that a malformed, oversized or unknown
// request closes the connection and changes nothing.
func TestBadFramesClose(t *testing.T) {
	s, srv := serve(t, &broker.Options{MaxRequestBytes: 4096})
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	good := kmsg.NewRequestFormatter().AppendRequest(nil, produceReq("events", batch(t, 1)), 1)
	tests := []struct {
		name  string
		frame []byte
	}{
		{"shorter than a header", []byte{0, 0, 0, 3, 0, 0, 0}},
		{"size over MaxRequestBytes", binary.BigEndian.AppendUint32(nil, 4097)},
		{"negative size", binary.BigEndian.AppendUint32(nil, 0x80000000)},
		{"unknown key", []byte{0, 0, 0, 10, 0x7f, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff}},
		{"unserved version", []byte{0, 0, 0, 10, 0, 1, 0, 0, 0, 0, 0, 1, 0xff, 0xff}}, // Fetch v0
		{"body cut", append(binary.BigEndian.AppendUint32(nil, uint32(len(good)-8)), good[4:len(good)-4]...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, srv)
			_, err := c.nc.Write(tt.frame)
			require.NoError(t, err)
			c.requireClosed()
		})
	}
	end, err := s.ListOffsets("events", 0, strata.Latest)
	require.NoError(t, err)
	require.Equal(t, int64(0), end)
}

// TestApiVersionsUnknownVersion checks the v0 answer with
// UNSUPPORTED_VERSION and the ranges, and that Produce starts at v0.
func TestApiVersionsUnknownVersion(t *testing.T) {
	_, srv := serve(t, nil)
	c := dial(t, srv)
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(99)
	corr := c.send(req)
	body := c.readFrame()
	require.Equal(t, corr, int32(binary.BigEndian.Uint32(body)))
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	require.NoError(t, resp.ReadFrom(body[4:]))
	require.Equal(t, int16(35), resp.ErrorCode)
	var produce *kmsg.ApiVersionsResponseApiKey
	for i, k := range resp.ApiKeys {
		if k.ApiKey == 0 {
			produce = &resp.ApiKeys[i]
		}
	}
	require.NotNil(t, produce)
	require.Equal(t, int16(0), produce.MinVersion)

	req.SetVersion(3)
	ok := c.roundTrip(req).(*kmsg.ApiVersionsResponse)
	require.Equal(t, int16(0), ok.ErrorCode)
}

func fetchReq(topic string, offset int64, iso int8, maxWait time.Duration) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(11)
	req.MaxWaitMillis = int32(maxWait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = 1 << 20
	req.IsolationLevel = iso
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset = offset
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// TestFetchWaitBoundedByIdleTimeout checks that a Fetch asking to wait
// an hour at the end is answered, empty, once IdleTimeout has passed.
func TestFetchWaitBoundedByIdleTimeout(t *testing.T) {
	s, srv := serve(t, &broker.Options{IdleTimeout: 300 * time.Millisecond})
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	c := dial(t, srv)
	start := time.Now()
	resp := c.roundTrip(fetchReq("events", 0, 0, time.Hour)).(*kmsg.FetchResponse)
	require.Less(t, time.Since(start), 20*time.Second)
	p := resp.Topics[0].Partitions[0]
	require.Equal(t, int16(0), p.ErrorCode)
	require.NotNil(t, p.RecordBatches)
	require.Empty(t, p.RecordBatches)
}

// TestFetchLongPoll checks that a Fetch at the end waits for the next
// append and returns it, and that a fetch inside a batch returns the
// whole batch.
func TestFetchLongPoll(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	ctx := context.Background()
	_, err := s.AppendTo(ctx, "events", 0, strata.Record{Value: []byte("a")}, strata.Record{Value: []byte("b")})
	require.NoError(t, err)
	c := dial(t, srv)

	resp := c.roundTrip(fetchReq("events", 1, 0, 0)).(*kmsg.FetchResponse)
	p := resp.Topics[0].Partitions[0]
	require.Equal(t, int16(0), p.ErrorCode)
	h, err := log.ReadHeader(p.RecordBatches)
	require.NoError(t, err)
	require.Equal(t, int64(0), h.BaseOffset, "the batch holding offset 1")
	require.Equal(t, int64(2), p.HighWatermark)

	corr := c.send(fetchReq("events", 2, 0, time.Minute))
	_, err = s.AppendTo(ctx, "events", 0, strata.Record{Value: []byte("c")})
	require.NoError(t, err)
	body := c.readFrame()
	require.Equal(t, corr, int32(binary.BigEndian.Uint32(body)))
	resp = kmsg.NewPtrFetchResponse()
	resp.SetVersion(11)
	require.NoError(t, resp.ReadFrom(body[4:]))
	h, err = log.ReadHeader(resp.Topics[0].Partitions[0].RecordBatches)
	require.NoError(t, err)
	require.Equal(t, int64(2), h.BaseOffset)

	resp = c.roundTrip(fetchReq("missing", 0, 0, time.Minute)).(*kmsg.FetchResponse)
	require.Equal(t, int16(3), resp.Topics[0].Partitions[0].ErrorCode, "an error answers at once")
	resp = c.roundTrip(fetchReq("events", 10, 0, time.Minute)).(*kmsg.FetchResponse)
	require.Equal(t, int16(1), resp.Topics[0].Partitions[0].ErrorCode)
}

// TestFetchReadCommitted checks the last stable offset and the aborted
// transactions of a read_committed fetch.
func TestFetchReadCommitted(t *testing.T) {
	s, srv := serve(t, nil)
	// A MaxBatchBytes of 256 and records of 100 bytes make a transaction
	// write every two records before it ends.
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{MaxBatchBytes: 256}))
	ctx := context.Background()
	value := func(v string) strata.Record { return strata.Record{Value: fmt.Appendf(nil, "%-100s", v)} }
	txn := func(id string, n int) *strata.Txn {
		tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: id})
		require.NoError(t, err)
		for i := range n {
			require.NoError(t, tx.AppendTo(ctx, "events", 0, value(fmt.Sprint(id, i))))
		}
		return tx
	}
	require.NoError(t, txn("refunds", 3).Abort(ctx))       // 0, 1 written, the marker at 2
	_, err := s.AppendTo(ctx, "events", 0, value("plain")) // 3
	require.NoError(t, err)
	open := txn("payouts", 3) // 4, 5 written
	defer open.Abort(ctx)

	c := dial(t, srv)
	resp := c.roundTrip(fetchReq("events", 0, 1, 0)).(*kmsg.FetchResponse)
	p := resp.Topics[0].Partitions[0]
	require.Equal(t, int16(0), p.ErrorCode)
	require.Len(t, p.AbortedTransactions, 1)
	require.Equal(t, int64(0), p.AbortedTransactions[0].FirstOffset)
	require.Equal(t, int64(4), p.LastStableOffset)
	require.Equal(t, int64(6), p.HighWatermark)
	require.Equal(t, int64(4), batchesEndOf(t, p.RecordBatches), "nothing at or past the LSO")

	resp = c.roundTrip(fetchReq("events", 0, 0, 0)).(*kmsg.FetchResponse)
	require.Empty(t, resp.Topics[0].Partitions[0].AbortedTransactions)
	require.Equal(t, int64(6), batchesEndOf(t, resp.Topics[0].Partitions[0].RecordBatches))
}

func batchesEndOf(t *testing.T, b []byte) int64 {
	var end int64
	for len(b) > 0 {
		h, err := log.ReadHeader(b)
		require.NoError(t, err)
		end = h.NextOffset()
		b = b[h.Size():]
	}
	return end
}

// TestListOffsets checks earliest, latest (both isolation levels) and by
// time.
func TestListOffsets(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	ctx := context.Background()
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for i := range 3 {
		_, err := s.AppendTo(ctx, "events", 0, strata.Record{Value: []byte("x"), Timestamp: t0.Add(time.Duration(i) * time.Minute)})
		require.NoError(t, err)
	}
	require.NoError(t, s.DeleteRecords("events", 0, 1))
	c := dial(t, srv)
	for _, tt := range []struct {
		name    string
		version int16
		ts      int64
		want    int64
	}{
		{"earliest", 1, -2, 1},
		{"latest", 2, -1, 3},
		{"by time", 4, t0.Add(90 * time.Second).UnixMilli(), 2},
		{"past the last", 6, t0.Add(time.Hour).UnixMilli(), -1},
		{"v0 latest", 0, -1, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := kmsg.NewPtrListOffsetsRequest()
			req.SetVersion(tt.version)
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = "events"
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Timestamp, rp.MaxNumOffsets = tt.ts, 1
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			p := c.roundTrip(req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
			require.Equal(t, int16(0), p.ErrorCode)
			if tt.version == 0 {
				require.Equal(t, []int64{tt.want}, p.OldStyleOffsets)
			} else {
				require.Equal(t, tt.want, p.Offset)
			}
		})
	}
}

// TestMetadataAutoCreate checks that Metadata creates a topic only when
// the option and the request both allow it.
func TestMetadataAutoCreate(t *testing.T) {
	for _, auto := range []bool{false, true} {
		t.Run(fmt.Sprint("auto=", auto), func(t *testing.T) {
			s, srv := serve(t, &broker.Options{AutoCreateTopics: auto, AdvertisedAddr: "kafka.example:9093"})
			c := dial(t, srv)
			req := kmsg.NewPtrMetadataRequest()
			req.SetVersion(12)
			req.AllowAutoTopicCreation = true
			rt := kmsg.NewMetadataRequestTopic()
			name := "new"
			rt.Topic = &name
			req.Topics = append(req.Topics, rt)
			resp := c.roundTrip(req).(*kmsg.MetadataResponse)
			require.Equal(t, "kafka.example", resp.Brokers[0].Host)
			require.Equal(t, int32(9093), resp.Brokers[0].Port)
			if !auto {
				require.Equal(t, int16(3), resp.Topics[0].ErrorCode)
				require.Empty(t, s.Topics())
				return
			}
			require.Equal(t, int16(0), resp.Topics[0].ErrorCode)
			require.Len(t, resp.Topics[0].Partitions, 1)
			require.Equal(t, []string{"new"}, s.Topics())
		})
	}
}

// TestConnLimits checks that a connection idle, or stalled mid-request,
// for IdleTimeout is closed, and that one over MaxConns is closed at once.
func TestConnLimits(t *testing.T) {
	_, srv := serve(t, &broker.Options{IdleTimeout: 50 * time.Millisecond, MaxConns: 2})
	idle := dial(t, srv)
	stalled := dial(t, srv)
	_, err := stalled.nc.Write([]byte{0, 0, 0, 20, 0, 18})
	require.NoError(t, err)
	idle.requireClosed()
	stalled.requireClosed()

	srv2 := func() *broker.Server { _, s := serve(t, &broker.Options{MaxConns: 1}); return s }()
	first := dial(t, srv2)
	first.roundTrip(kmsg.NewPtrApiVersionsRequest())
	dial(t, srv2).requireClosed()
	first.roundTrip(kmsg.NewPtrApiVersionsRequest())
}

// TestFindCoordinator checks that every group and transactional id is
// coordinated by node 0, at the advertised address, in both shapes.
func TestFindCoordinator(t *testing.T) {
	_, srv := serve(t, &broker.Options{AdvertisedAddr: "kafka.example:9093"})
	c := dial(t, srv)
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.SetVersion(3)
	req.CoordinatorKey = "g"
	resp := c.roundTrip(req).(*kmsg.FindCoordinatorResponse)
	require.Equal(t, int16(0), resp.ErrorCode)
	require.Equal(t, [3]any{int32(0), "kafka.example", int32(9093)}, [3]any{resp.NodeID, resp.Host, resp.Port})

	req.SetVersion(4)
	req.CoordinatorType = 1
	req.CoordinatorKeys = []string{"a", "b"}
	resp = c.roundTrip(req).(*kmsg.FindCoordinatorResponse)
	require.Len(t, resp.Coordinators, 2)
	require.Equal(t, "b", resp.Coordinators[1].Key)
	require.Equal(t, int32(9093), resp.Coordinators[1].Port)

	req.CoordinatorType = 2
	resp = c.roundTrip(req).(*kmsg.FindCoordinatorResponse)
	require.Equal(t, int16(42), resp.Coordinators[0].ErrorCode)
}

// TestServeAndClose checks New and Serve on a listener of the caller's,
// that Serve returns ErrServerClosed after Close, and that a second Serve
// is refused.
func TestServeAndClose(t *testing.T) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	srv, err := broker.New(s, nil)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	c := dial(t, waitServing(t, srv))
	c.roundTrip(kmsg.NewPtrApiVersionsRequest())
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.ErrorIs(t, srv.Serve(ln2), broker.ErrInvalidOptions)
	require.NoError(t, srv.Close())
	require.ErrorIs(t, <-served, broker.ErrServerClosed)
	c.requireClosed()
	require.NoError(t, srv.Close(), "again")

	_, err = broker.New(s, &broker.Options{MaxRequestBytes: 10})
	require.ErrorIs(t, err, broker.ErrInvalidOptions)
	_, err = broker.New(s, &broker.Options{AdvertisedAddr: "no-port"})
	require.ErrorIs(t, err, broker.ErrInvalidOptions)
}

// waitServing returns srv once Serve has taken its listener.
func waitServing(t *testing.T, srv *broker.Server) *broker.Server {
	for srv.Addr() == nil {
		runtime.Gosched()
	}
	return srv
}

// TestCloseLogsNothingOfItsOwn checks that the connections Close closes
// leave no line in ErrorLog, while one closed for a bad request does.
func TestCloseLogsNothingOfItsOwn(t *testing.T) {
	var logs lockedBuffer
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	srv, err := broker.Start(s, &broker.Options{Addr: "127.0.0.1:0", ErrorLog: stdlog.New(&logs, "", 0)})
	require.NoError(t, err)
	idle := dial(t, srv)
	idle.roundTrip(kmsg.NewPtrApiVersionsRequest())
	bad := dial(t, srv)
	_, err = bad.nc.Write([]byte{0x7f, 0xff, 0xff, 0xff})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "closed") }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, srv.Close())
	require.Equal(t, 1, strings.Count(logs.String(), "\n"), logs.String())
}
