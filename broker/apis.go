package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// api is one API key the broker serves: its version range and handler. A
// handler gets a request decoded at a version in the range and returns
// its response (the caller sets its version), nil for none, or an error
// that closes the connection.
type api struct {
	key      kmsg.Key
	min, max int16
	handle   func(srv *Server, h header, req kmsg.Request) (kmsg.Response, error)
}

// apis are the APIs served, by key. Serving another is a file of its own
// (NN_name.go, NN its key) with its handler, and a row here.
//
// The ranges start low enough for Debian's librdkafka 2.0.2 to enable its
// features (it needs each range to overlap single versions: Produce 3
// and 7, Fetch 4 and 10, ListOffsets 1, InitProducerId 0, FindCoordinator
// 0 for LZ4; rdkafka_feature.c), and Produce from v0: librdkafka sends
// compressed batches only to a broker that advertises Produce v0
// (librdkafka #4956; Kafka keeps v0-v2 advertised for it, KAFKA-18659),
// though a request at v0-v2 carries legacy messages, which Produce
// answers with UNSUPPORTED_FOR_MESSAGE_FORMAT. They end before the
// versions that name topics by id (Produce v13, Fetch v13, DeleteTopics
// v6).
var apis []api

// byKey indexes apis by key.
var byKey map[int16]*api

// init fills apis, which refer to the handler of ApiVersions, which lists
// apis.
func init() {
	apis = []api{
		{kmsg.Produce, 0, 11, handleProduce},
		{kmsg.Fetch, 4, 12, handleFetch},
		{kmsg.ListOffsets, 0, 10, handleListOffsets},
		{kmsg.Metadata, 0, 12, handleMetadata},
		{kmsg.OffsetCommit, 0, 9, handleOffsetCommit},
		{kmsg.OffsetFetch, 0, 9, handleOffsetFetch},
		{kmsg.FindCoordinator, 0, 4, handleFindCoordinator},
		{kmsg.JoinGroup, 0, 9, handleJoinGroup},
		{kmsg.Heartbeat, 0, 4, handleHeartbeat},
		{kmsg.LeaveGroup, 0, 5, handleLeaveGroup},
		{kmsg.SyncGroup, 0, 5, handleSyncGroup},
		{kmsg.DescribeGroups, 0, 5, handleDescribeGroups},
		{kmsg.ListGroups, 0, 5, handleListGroups},
		{kmsg.ApiVersions, 0, 4, handleApiVersions},
		{kmsg.CreateTopics, 0, 7, handleCreateTopics},
		{kmsg.DeleteTopics, 0, 5, handleDeleteTopics},
		{kmsg.DeleteRecords, 0, 2, handleDeleteRecords},
		{kmsg.InitProducerID, 0, 4, handleInitProducerID},
		{kmsg.AddPartitionsToTxn, 0, 3, handleAddPartitionsToTxn},
		{kmsg.AddOffsetsToTxn, 0, 4, handleAddOffsetsToTxn},
		{kmsg.EndTxn, 0, 4, handleEndTxn},
		{kmsg.TxnOffsetCommit, 0, 4, handleTxnOffsetCommit},
		{kmsg.DescribeTransactions, 0, 0, handleDescribeTransactions},
		{kmsg.ListTransactions, 0, 1, handleListTransactions},
		{kmsg.DescribeConfigs, 0, 4, handleDescribeConfigs},
		{kmsg.DeleteGroups, 0, 2, handleDeleteGroups},
		{kmsg.OffsetDelete, 0, 0, handleOffsetDelete},
		{kmsg.AlterConfigs, 0, 2, handleAlterConfigs},
		{kmsg.CreatePartitions, 0, 3, handleCreatePartitions},
		{kmsg.IncrementalAlterConfigs, 0, 1, handleIncrementalAlterConfigs},
		{kmsg.SASLHandshake, 0, 1, handleSaslHandshake},
		{kmsg.SASLAuthenticate, 0, 2, handleSaslAuthenticate},
		{kmsg.DescribeCluster, 0, 1, handleDescribeCluster},
		{kmsg.ConsumerGroupHeartbeat, 0, 1, handleConsumerGroupHeartbeat},
		{kmsg.ConsumerGroupDescribe, 0, 1, handleConsumerGroupDescribe},
	}
	byKey = make(map[int16]*api, len(apis))
	for i := range apis {
		byKey[apis[i].key.Int16()] = &apis[i]
	}
}

// apiFor returns the API of key, nil if it is not served.
func apiFor(key int16) *api { return byKey[key] }
