package broker_test

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// serve opens a store in a temporary directory and serves it on a free
// loopback port; both close when the test ends.
func serve(t testing.TB, opts *broker.Options) (*strata.Store, *broker.Server) {
	t.Helper()
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	var o broker.Options
	if opts != nil {
		o = *opts
	}
	o.Addr = "127.0.0.1:0"
	srv, err := broker.Start(s, &o)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		require.NoError(t, s.Close())
	})
	return s, srv
}

// rawClient speaks the protocol by hand, for requests kgo would not send.
type rawClient struct {
	t    *testing.T
	nc   net.Conn
	corr int32
	f    *kmsg.RequestFormatter
}

func dial(t *testing.T, srv *broker.Server) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", srv.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return &rawClient{t: t, nc: nc, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw"))}
}

// send writes a request at its version.
func (c *rawClient) send(req kmsg.Request) int32 {
	c.corr++
	_, err := c.nc.Write(c.f.AppendRequest(nil, req, c.corr))
	require.NoError(c.t, err)
	return c.corr
}

// roundTrip sends req and decodes its response.
func (c *rawClient) roundTrip(req kmsg.Request) kmsg.Response {
	c.t.Helper()
	corr := c.send(req)
	resp := req.ResponseKind()
	body := c.readFrame()
	require.Equal(c.t, corr, int32(binary.BigEndian.Uint32(body)))
	body = body[4:]
	if resp.IsFlexible() && resp.Key() != kmsg.ApiVersions.Int16() {
		require.Equal(c.t, byte(0), body[0], "empty tagged fields")
		body = body[1:]
	}
	require.NoError(c.t, resp.ReadFrom(body))
	return resp
}

// txnOffsetCommit sends req with one partition, 0 of topic at offset,
// and returns that partition's error code.
func (c *rawClient) txnOffsetCommit(req *kmsg.TxnOffsetCommitRequest, topic string, offset int64) int16 {
	c.t.Helper()
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Offset = offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return c.roundTrip(req).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
}

func (c *rawClient) readFrame() []byte {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	var size [4]byte
	_, err := io.ReadFull(c.nc, size[:])
	require.NoError(c.t, err)
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err = io.ReadFull(c.nc, body)
	require.NoError(c.t, err)
	return body
}

// requireClosed checks that the broker closed the connection.
func (c *rawClient) requireClosed() {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, err := c.nc.Read(make([]byte, 1))
	require.Equal(c.t, 0, n)
	require.ErrorIs(c.t, err, io.EOF)
}
