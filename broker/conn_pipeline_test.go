package broker_test

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// TestPipelinedResponsesBeforeLongPoll checks that the responses to
// requests sent together with a Fetch that waits for records after them
// are written before the Fetch waits, in request order, and the Fetch's
// once records arrive.
func TestPipelinedResponsesBeforeLongPoll(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	c := dial(t, srv)
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw"))
	meta := kmsg.NewPtrMetadataRequest()
	meta.SetVersion(7)
	var out []byte // AppendRequest sizes the frame at the start of its dst
	out = append(out, f.AppendRequest(nil, produceReq("events", batch(t, 1)), 1)...)
	out = append(out, f.AppendRequest(nil, meta, 2)...)
	out = append(out, f.AppendRequest(nil, fetchReq("events", 1, 0, time.Minute), 3)...)
	_, err := c.nc.Write(out)
	require.NoError(t, err)

	start := time.Now()
	for corr := int32(1); corr <= 2; corr++ {
		body := c.readFrame()
		require.Equal(t, corr, int32(binary.BigEndian.Uint32(body)), "correlation id")
	}
	require.Less(t, time.Since(start), 20*time.Second, "not held behind the Fetch's minute")

	_, err = s.AppendTo(context.Background(), "events", 0, strata.Record{Value: []byte("b")})
	require.NoError(t, err)
	body := c.readFrame()
	require.Equal(t, int32(3), int32(binary.BigEndian.Uint32(body)), "correlation id")
}
