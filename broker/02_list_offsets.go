package broker

import (
	"time"

	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The timestamps of ListOffsets that name an offset rather than a time
// (Kafka's ListOffsetsRequest constants).
const (
	latestTimestamp   = -1
	earliestTimestamp = -2
)

// handleListOffsets looks up each partition's earliest offset, latest
// offset (the high watermark; under read_committed, isolation level 1,
// the last stable offset) or the first offset of a record at or after a
// time, with Store.ListOffsets. A time no record reaches is offset -1, as
// Kafka answers. The response's timestamp is -1: the time of the record
// found is not looked up. v0 answers with one old-style offset.
func handleListOffsets(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	view := srv.view(req.IsolationLevel)
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, -1, -1
			var spec strata.OffsetSpec
			switch rp.Timestamp {
			case latestTimestamp:
				spec = strata.Latest
			case earliestTimestamp:
				spec = strata.Earliest
			default:
				if rp.Timestamp < 0 {
					sp.ErrorCode = errUnsupportedVersion
					st.Partitions = append(st.Partitions, sp)
					continue
				}
				spec = strata.AtTime(time.UnixMilli(rp.Timestamp))
			}
			off, err := view.ListOffsets(rt.Topic, int(rp.Partition), spec)
			if err != nil {
				sp.ErrorCode = codeOf(err)
			} else {
				sp.Offset = off
				if req.Version == 0 {
					sp.OldStyleOffsets = []int64{off}
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
