package broker

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAppendFetchFrame checks, at every Fetch version served, that the
// frame appendFetchFrame encodes (its head with the cuts put back) is the
// one appendResponse encodes with kmsg, and that the record sets of
// zeroCopyMin bytes and more are cuts, smaller ones copied.
func TestAppendFetchFrame(t *testing.T) {
	small := bytes.Repeat([]byte{1}, zeroCopyMin-1)
	large := bytes.Repeat([]byte{2}, zeroCopyMin)
	huge := bytes.Repeat([]byte{3}, 200<<10) // a length of three uvarint bytes
	for v := int16(4); v <= 12; v++ {
		for _, tc := range []struct {
			name string
			sets [][]byte // one partition each
			cuts int
		}{
			{"none", nil, 0},
			{"empty", [][]byte{{}}, 0},
			{"null", [][]byte{nil}, 0},
			{"small", [][]byte{small}, 0},
			{"large", [][]byte{large}, 1},
			{"mixed", [][]byte{large, {}, small, huge, nil}, 2},
		} {
			t.Run(fmt.Sprintf("v%d/%s", v, tc.name), func(t *testing.T) {
				resp := kmsg.NewPtrFetchResponse()
				resp.SetVersion(v)
				resp.ThrottleMillis, resp.ErrorCode, resp.SessionID = 3, 0, 0
				for i, set := range tc.sets {
					st := kmsg.NewFetchResponseTopic()
					st.Topic = fmt.Sprintf("topic-%d", i)
					sp := kmsg.NewFetchResponseTopicPartition()
					sp.Partition, sp.ErrorCode = int32(i), int16(i%2)
					sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = 100+int64(i), 90, 5
					sp.PreferredReadReplica = -1
					sp.RecordBatches = set
					switch i % 3 {
					case 1:
						sp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
					case 2:
						sp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 7, FirstOffset: 11}, {ProducerID: 8, FirstOffset: 12}}
					}
					st.Partitions = append(st.Partitions, sp, sp)
					resp.Topics = append(resp.Topics, st)
				}
				want := appendResponse(nil, 42, resp)
				var f frameBuffers
				require.True(t, appendFetchFrame(&f, 42, resp))
				require.Len(t, f.cuts, 2*tc.cuts)
				var got []byte
				for _, b := range f.buffers(nil) {
					got = append(got, b...)
				}
				require.Equal(t, want, got)
			})
		}
	}
}

// TestAppendFetchFrameDeclines checks that a response with fields the
// broker never sets is left to kmsg.
func TestAppendFetchFrameDeclines(t *testing.T) {
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(12)
	st := kmsg.NewFetchResponseTopic()
	sp := kmsg.NewFetchResponseTopicPartition()
	sp.CurrentLeader.LeaderID = 0
	st.Partitions = append(st.Partitions, sp)
	resp.Topics = append(resp.Topics, st)
	var f frameBuffers
	require.False(t, appendFetchFrame(&f, 1, resp))
	resp.SetVersion(13)
	resp.Topics = nil
	require.False(t, appendFetchFrame(&f, 1, resp))
}
