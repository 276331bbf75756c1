package broker

import (
	"time"

	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The timestamps of ListOffsets that name an offset rather than a time
// (Kafka's ListOffsetsRequest constants).
const (
	latestTimestamp        = -1
	earliestTimestamp      = -2
	maxTimestamp           = -3 // KIP-734, v7+
	earliestLocalTimestamp = -4 // KIP-405, v8+
	latestTieredTimestamp  = -5 // KIP-1005, v9+
)

// handleListOffsets looks up each partition's offsets with
// View.ListOffsetTime at the request's isolation level: earliest (-2, and
// -4, the earliest offset on local disk, which is every offset here),
// latest (-1: the high watermark; under read_committed, isolation level 1,
// the last stable offset), the first record at or after a time, answered
// with that record's own timestamp, and the record with the largest
// timestamp (-3). A time no record reaches is offset -1, as Kafka answers;
// so is -5, the latest offset in tiered storage, which Strata does not
// have. Under read_committed only records below the last stable offset
// are found. The timestamp of an earliest or latest offset is -1, as in
// Kafka. A special timestamp the request's version does not know is
// UNSUPPORTED_VERSION. v0 answers with one old-style offset.
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
			spec, ok := offsetSpec(rp.Timestamp, req.Version)
			if !ok {
				sp.ErrorCode = errUnsupportedVersion
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			ot, err := view.ListOffsetTime(rt.Topic, int(rp.Partition), spec)
			switch {
			case err != nil:
				sp.ErrorCode = codeOf(err)
			case rp.Timestamp == latestTieredTimestamp:
				// No tiered storage: nothing is there.
			default:
				sp.Offset = ot.Offset
				if !ot.Timestamp.IsZero() {
					sp.Timestamp = ot.Timestamp.UnixMilli()
				}
				if req.Version == 0 {
					sp.OldStyleOffsets = []int64{ot.Offset}
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// offsetSpec returns the offset spec of a ListOffsets timestamp at a
// request version, and false for a special timestamp the version does not
// have (Kafka's ListOffsetsRequest: -3 from v7, -4 from v8, -5 from v9).
// -5 maps to Latest only so that the partition is checked.
func offsetSpec(ts int64, version int16) (strata.OffsetSpec, bool) {
	switch {
	case ts >= 0:
		return strata.AtTime(time.UnixMilli(ts)), true
	case ts == latestTimestamp:
		return strata.Latest, true
	case ts == earliestTimestamp:
		return strata.Earliest, true
	case ts == maxTimestamp && version >= 7:
		return strata.MaxTimestamp, true
	case ts == earliestLocalTimestamp && version >= 8:
		return strata.Earliest, true
	case ts == latestTieredTimestamp && version >= 9:
		return strata.Latest, true
	}
	return strata.OffsetSpec{}, false
}
