package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleDeleteTopics deletes each topic named with Store.DeleteTopic
// (versions before 6, which name topics rather than ids); each gets its
// own error code: UNKNOWN_TOPIC_OR_PARTITION for one the store does not
// have, INVALID_TOPIC_EXCEPTION for an internal one.
func handleDeleteTopics(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteTopicsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	for _, name := range req.TopicNames {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic = &name
		if err := srv.store.DeleteTopic(name); err != nil {
			st.ErrorCode = codeOf(err)
			msg := err.Error()
			st.ErrorMessage = &msg
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
