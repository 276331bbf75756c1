package broker

import (
	"errors"
	"slices"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/topic"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// nodeID is the broker's node id: the one broker, leader of every
// partition.
const nodeID = 0

// clusterID is the cluster id Metadata reports.
const clusterID = "strata"

// internalTopics are the store's internal topics, which a Metadata
// request for every topic lists once the store has created them, as Kafka
// lists its own (clients skip them: kgo's regex consumer, librdkafka's
// pattern subscription). The store creates __consumer_offsets at the first
// commit, not at the first FindCoordinator as Kafka does.
var internalTopics = []string{strata.ConsumerOffsetsTopic, strata.TransactionStateTopic}

// handleMetadata describes the broker and the topics asked for (all of
// them, the internal ones included, for a null list, or an empty one at
// v0), creating the unknown ones when Options.AutoCreateTopics allows it
// and the request does (always below v4). A topic asked for by id, with
// a null name (v12 on), is described by its name, or is
// UNKNOWN_TOPIC_ID. Authorized operations, when asked for (v8 on; the
// cluster's up to v10), are all of them (authorized_ops.go). Leader
// epochs are -1, which turns off the clients' KIP-320 checks
// (OffsetForLeaderEpoch is not served).
func handleMetadata(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.MetadataRequest)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	host, port := srv.advertised()
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID, b.Host, b.Port = nodeID, host, port
	resp.Brokers = []kmsg.MetadataResponseBroker{b}
	cid := clusterID
	resp.ClusterID = &cid
	resp.ControllerID = nodeID
	if req.IncludeClusterAuthorizedOperations && req.Version <= 10 {
		resp.AuthorizedOperations = clusterOps
	}
	resp.Topics = srv.metadataTopics(req)
	if req.IncludeTopicAuthorizedOperations {
		for i := range resp.Topics {
			resp.Topics[i].AuthorizedOperations = topicOps
		}
	}
	return resp, nil
}

// metadataTopics describes the topics req asks for.
func (srv *Server) metadataTopics(req *kmsg.MetadataRequest) []kmsg.MetadataResponseTopic {
	var topics []kmsg.MetadataResponseTopic
	if req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0) {
		for _, name := range srv.store.Topics() {
			topics = append(topics, srv.topicMetadata(name, false))
		}
		for _, name := range internalTopics {
			if t := srv.topicMetadata(name, false); t.ErrorCode == errNone {
				topics = append(topics, t)
			}
		}
		return topics
	}
	create := srv.opts.AutoCreateTopics && (req.Version < 4 || req.AllowAutoTopicCreation)
	var byID map[[16]byte]string
	for _, rt := range req.Topics {
		if rt.Topic != nil {
			topics = append(topics, srv.topicMetadata(*rt.Topic, create))
			continue
		}
		if byID == nil {
			byID = srv.topicIDs()
		}
		name, ok := byID[rt.TopicID]
		if !ok {
			t := kmsg.NewMetadataResponseTopic()
			t.TopicID, t.ErrorCode = rt.TopicID, errUnknownTopicID
			topics = append(topics, t)
			continue
		}
		topics = append(topics, srv.topicMetadata(name, false))
	}
	return topics
}

// allTopics returns the names of the store's topics, the internal ones
// that exist included.
func (srv *Server) allTopics() []string {
	names := srv.store.Topics()
	for _, name := range internalTopics {
		if _, err := srv.store.DescribeTopic(name); err == nil {
			names = append(names, name)
		}
	}
	return names
}

// topicIDs maps the ids of the store's topics to their names, for a
// Metadata request that names topics by id (v12 on, KIP-516).
func (srv *Server) topicIDs() map[[16]byte]string {
	m := map[[16]byte]string{}
	for _, name := range srv.allTopics() {
		if d, err := srv.store.DescribeTopic(name); err == nil {
			m[[16]byte(d.ID)] = name
		}
	}
	return m
}

// topicMetadata describes one topic, creating it first if create and it
// does not exist (an internal topic of the store's that does not exist yet
// is UNKNOWN_TOPIC_OR_PARTITION: the store creates it when it needs it).
func (srv *Server) topicMetadata(name string, create bool) kmsg.MetadataResponseTopic {
	t := kmsg.NewMetadataResponseTopic()
	t.Topic = &name
	d, err := srv.store.DescribeTopic(name)
	if create && errors.Is(err, strata.ErrUnknownTopic) && !slices.Contains(internalTopics, name) {
		err = srv.store.EnsureTopic(name, srv.opts.AutoCreateConfig)
		if err == nil || errors.Is(err, strata.ErrTopicConfigMismatch) {
			d, err = srv.store.DescribeTopic(name)
		}
	}
	if err == nil && topic.IsInternal(name) {
		// Internal topics are the store's: listed, as Kafka lists them,
		// but not to be produced to or fetched from.
		t.IsInternal = true
	}
	if err != nil {
		t.ErrorCode = codeOf(err)
		return t
	}
	t.TopicID = [16]byte(d.ID)
	for _, p := range d.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = int32(p.Partition)
		mp.Leader = nodeID
		mp.LeaderEpoch = -1
		mp.Replicas = []int32{nodeID}
		mp.ISR = []int32{nodeID}
		mp.OfflineReplicas = []int32{}
		t.Partitions = append(t.Partitions, mp)
	}
	return t
}
