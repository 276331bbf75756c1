package broker

import (
	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleDeleteRecords moves each partition's start offset to the offset
// asked for (-1 for the high watermark) with Store.DeleteRecords, and
// answers the new start offset (the low watermark). An offset past the
// high watermark is OFFSET_OUT_OF_RANGE.
func handleDeleteRecords(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteRecordsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	view := srv.store.View(strata.ReadUncommitted)
	for _, rt := range req.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition, sp.LowWatermark = rp.Partition, -1
			sp.ErrorCode = srv.deleteRecords(view, rt.Topic, int(rp.Partition), rp.Offset)
			if sp.ErrorCode == errNone {
				sp.LowWatermark, _ = view.ListOffsets(rt.Topic, int(rp.Partition), strata.Earliest)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

func (srv *Server) deleteRecords(view strata.View, topic string, part int, offset int64) int16 {
	hw, err := view.ListOffsets(topic, part, strata.Latest)
	switch {
	case err != nil:
		return codeOf(err)
	case offset == -1:
		offset = hw
	case offset < 0 || offset > hw:
		return errOffsetOutOfRange
	}
	return codeOf(srv.store.DeleteRecords(topic, part, offset))
}
