package broker

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// writesConn is a net.Conn that keeps each Write's bytes.
type writesConn struct {
	net.Conn // nil: only what the writer calls is implemented
	writes   [][]byte
}

func (w *writesConn) Write(p []byte) (int, error) {
	w.writes = append(w.writes, append([]byte(nil), p...))
	return len(p), nil
}

func (w *writesConn) Close() error { return nil }

// TestWriteCoalesces checks that the responses handled before a flush go
// out in one write, in order, up to coalesceBytes of them and a Fetch
// response last, and that the bytes are each response's frame back to
// back.
func TestWriteCoalesces(t *testing.T) {
	produce := func() kmsg.Response {
		resp := kmsg.NewPtrProduceResponse()
		resp.SetVersion(8)
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = "events"
		rt.Partitions = append(rt.Partitions, kmsg.NewProduceResponseTopicPartition())
		resp.Topics = append(resp.Topics, rt)
		return resp
	}
	large := func() kmsg.Response { // over half coalesceBytes
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		resp.SetVersion(1)
		resp.SASLAuthBytes = bytes.Repeat([]byte{7}, coalesceBytes/2+1)
		return resp
	}
	fetch := func() kmsg.Response { // with a record set sent as a cut
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(12)
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = "events"
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.RecordBatches = bytes.Repeat([]byte{9}, zeroCopyMin)
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		return &fetchResponse{FetchResponse: resp}
	}
	for _, tc := range []struct {
		name  string
		resps []kmsg.Response
		// writes is how many of the responses each write holds;
		// without writev (writesConn has none) a write with a fetch
		// is one Write call per iovec: calls counts them.
		writes []int
		calls  int
	}{
		{"one", []kmsg.Response{produce()}, []int{1}, 1},
		{"eight", []kmsg.Response{produce(), produce(), produce(), produce(), produce(), produce(), produce(), produce()}, []int{8}, 1},
		{"up to coalesceBytes", []kmsg.Response{large(), large(), large(), produce()}, []int{2, 2}, 2},
		// produce, produce, fetch (head, cut, tail); produce, fetch.
		{"fetch last", []kmsg.Response{produce(), produce(), fetch(), produce(), fetch()}, nil, 4 + 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &writesConn{}
			c := &conn{srv: &Server{}, nc: w, now: time.Now}
			var want [][]byte
			for i, resp := range tc.resps {
				want = append(want, appendResponse(nil, int32(i), resp))
				require.NoError(t, c.respond(int32(i), resp))
			}
			require.NoError(t, c.flush(nil))
			require.Equal(t, bytes.Join(want, nil), bytes.Join(w.writes, nil), "the frames in order")
			require.Len(t, w.writes, tc.calls)
			for i, n := range tc.writes {
				require.Equal(t, bytes.Join(want[:n], nil), w.writes[i], "write %d", i)
				want = want[n:]
			}
		})
	}
}
