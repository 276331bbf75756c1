package broker

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// testServer is a Server of a store with a topic "events" of two
// partitions, whose Close has ended its long polls at once.
func testServer(t testing.TB) *Server {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 2}))
	srv, err := New(s, nil)
	require.NoError(t, err)
	srv.cancel()
	return srv
}

func frameOf(req kmsg.Request) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("test")).AppendRequest(nil, req, 7)[4:]
}

// TestFetchEmptyRecordsNotNull checks that an empty partition carries an
// empty record set, which encodes as length 0, not as null (-1).
func TestFetchEmptyRecordsNotNull(t *testing.T) {
	srv := testServer(t)
	for _, v := range []int16{4, 11, 12} {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(v)
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "events"
		rt.Partitions = []kmsg.FetchRequestTopicPartition{kmsg.NewFetchRequestTopicPartition()}
		rt.Partitions[0].PartitionMaxBytes = 1 << 20
		req.Topics = []kmsg.FetchRequestTopic{rt}
		resp, corr, err := srv.handleFrame(frameOf(req))
		require.NoError(t, err)
		require.Equal(t, int32(7), corr)
		p := resp.(*fetchResponse).Topics[0].Partitions[0]
		require.NotNil(t, p.RecordBatches, "v%d", v)
		require.Empty(t, p.RecordBatches)
	}
}

// TestResponseHeader checks the flexible response header's tagged fields,
// which ApiVersions' never has.
func TestResponseHeader(t *testing.T) {
	meta := kmsg.NewPtrMetadataResponse()
	meta.SetVersion(9)
	b := appendResponse(nil, 5, meta)
	require.Equal(t, []byte{0, 0, 0, 5, 0}, b[4:9], "correlation id, no tagged fields")
	require.Equal(t, len(b)-4, int(binary.BigEndian.Uint32(b)))
	require.Equal(t, meta.AppendTo(nil), b[9:])
	av := kmsg.NewPtrApiVersionsResponse()
	av.SetVersion(3)
	b = appendResponse(nil, 5, av)
	require.Equal(t, []byte{0, 0, 0, 5}, b[4:8])
	require.Equal(t, av.AppendTo(nil), b[8:], "the body right after the correlation id")
}

// FuzzHandleFrame feeds request frames to the request path: none panics
// (a handler's panic would be turned into errPanic), and an error is a
// malformed request.
func FuzzHandleFrame(f *testing.F) {
	b, err := log.EncodeBatch(nil, []strata.Record{{Value: []byte("v")}}, log.BatchOptions{Now: time.Now().UnixMilli()})
	require.NoError(f, err)
	produce := kmsg.NewPtrProduceRequest()
	produce.SetVersion(9)
	produce.Acks = 1
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "events"
	pt.Partitions = []kmsg.ProduceRequestTopicPartition{kmsg.NewProduceRequestTopicPartition()}
	pt.Partitions[0].Records = b
	produce.Topics = []kmsg.ProduceRequestTopic{pt}
	f.Add(frameOf(produce))
	fetch := kmsg.NewPtrFetchRequest()
	fetch.SetVersion(12)
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "events"
	ft.Partitions = []kmsg.FetchRequestTopicPartition{kmsg.NewFetchRequestTopicPartition()}
	fetch.Topics = []kmsg.FetchRequestTopic{ft}
	f.Add(frameOf(fetch))
	meta := kmsg.NewPtrMetadataRequest()
	meta.SetVersion(4)
	f.Add(frameOf(meta))
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.SetVersion(0)
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "events"
	lt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{kmsg.NewListOffsetsRequestTopicPartition()}
	lo.Topics = []kmsg.ListOffsetsRequestTopic{lt}
	f.Add(frameOf(lo))
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(3)
	f.Add(frameOf(av))
	ipid := kmsg.NewPtrInitProducerIDRequest()
	ipid.SetVersion(4)
	f.Add(frameOf(ipid))
	for _, version := range []int16{3, 5} {
		join := kmsg.NewPtrJoinGroupRequest()
		join.SetVersion(version)
		join.Group, join.ProtocolType, join.SessionTimeoutMillis = "g", "consumer", 10000
		join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 1}}}
		f.Add(frameOf(join))
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.Generation = "g", 1
	f.Add(frameOf(sync))
	srv := testServer(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		resp, _, err := srv.handleFrame(frame)
		if errors.Is(err, ErrServerClosed) {
			return // a JoinGroup or SyncGroup that would wait: testServer is closed
		}
		if err != nil {
			require.ErrorIs(t, err, errMalformed)
			require.False(t, errors.Is(err, errPanic), "%v", err)
			return
		}
		if resp != nil {
			appendResponse(nil, 0, resp)
			releaseResponse(resp)
		}
	})
}

// TestHandlerPanicCloses checks that a handler's panic is recovered and
// closes the connection (an error), the Server going on.
func TestHandlerPanicCloses(t *testing.T) {
	srv := testServer(t)
	key := kmsg.ListOffsets.Int16()
	orig := byKey[key]
	t.Cleanup(func() { byKey[key] = orig })
	panicking := *orig
	panicking.handle = func(*Server, header, kmsg.Request) (kmsg.Response, error) { panic("boom") }
	byKey[key] = &panicking
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(1)
	_, _, err := srv.handleFrame(frameOf(req))
	require.ErrorIs(t, err, errPanic)
	byKey[key] = orig
	resp, _, err := srv.handleFrame(frameOf(req))
	require.NoError(t, err)
	require.NotNil(t, resp)
}
