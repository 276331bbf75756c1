// Package broker serves a strata.Store over Kafka's wire protocol, so that
// Kafka clients produce to, consume from and administer a Strata
// directory. Its tests run franz-go (kgo, kadm), Sarama and librdkafka
// (kcat, confluent-kafka-python) against it; the repository's README,
// under "Kafka clients", gives the versions tested and what is not
// supported.
//
// It is one broker, node id 0, the leader of every partition, whose
// metadata points clients at its advertised address. Request and response
// bodies are franz-go's kmsg types; the request and response headers are
// framed here (Kafka's RequestHeader v1/v2 and ResponseHeader v0/v1).
//
// # Basics
//
// Start listens and serves in the background:
//
//	srv, err := broker.Start(store, &broker.Options{Addr: "127.0.0.1:9092"})
//	...
//	defer srv.Close()
//
// New and Serve serve a listener of the caller's (with Options.TLS, a
// plain one: the Server runs the TLS handshakes). The defaults are a
// loopback address (DefaultAddr), plain TCP, no authentication and no
// topic auto-creation. Close closes the listener and every connection and
// waits for them; it does not close the Store.
//
// # What is served
//
// ApiVersions, Metadata, Produce, Fetch, ListOffsets, FindCoordinator,
// the classic group protocol (JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup; see Groups below), OffsetCommit and OffsetFetch,
// ListGroups, DescribeGroups, DeleteGroups, OffsetDelete, InitProducerId
// (idempotent and transactional producers), AddPartitionsToTxn,
// AddOffsetsToTxn, TxnOffsetCommit, EndTxn, Produce with a transactional
// id, DescribeTransactions, ListTransactions, CreateTopics, DeleteTopics,
// CreatePartitions, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs
// (the topic configs that may change on an existing topic: those
// retention and the cleaner read; see topic_configs.go), DeleteRecords,
// DescribeCluster, SaslHandshake and SaslAuthenticate, and
// ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848; see Consumer
// groups below). Each API has its file, named by its key (00_produce.go,
// 01_fetch.go, ...), whose handler's comment says what it does; apis.go
// lists the version ranges. Every other API key, or a version outside
// its range, makes the broker close the connection, as a Kafka broker
// does for a key it does not know. Not served: replication and the
// cluster's other APIs, ACLs, quotas, delegation tokens, share groups
// (KIP-932), legacy message formats, requests naming topics by id, and
// transaction version 2 (KIP-890).
//
// # Groups
//
// Classic groups are coordinated as Kafka's GroupCoordinator does, with
// the clients' assignors; their state is in memory (groups.go) and their
// commits in the store's __consumer_offsets. A JoinGroup or SyncGroup
// waits for the rebalance, blocking its connection as Kafka's does, until
// the rebalance completes or Close. A group is used either by
// strata.Consumer in the process or by wire clients: while it has wire
// members the Server holds a claim on it (strata.Store.ClaimGroup), and a
// wire JoinGroup for a group with consumers in the process is
// INCONSISTENT_GROUP_PROTOCOL.
//
// # Consumer groups
//
// KIP-848's consumer groups (ConsumerGroupHeartbeat v0-v1) are the
// store's own: each wire member is a member of the store's group
// coordinator (strata.Store.HeartbeatGroup), which assigns the
// partitions with the store's assignor and moves them incrementally, so
// that wire members and strata.Consumers of the process share one
// group. A partition reaches its new owner once its previous owner no
// longer reports it; a member's epoch is the group's generation as of
// its last heartbeat, and its commits (OffsetCommit v9+) carry it.
// What the broker keeps of a member (its id, epochs, instance id and
// subscription) is in memory (consumer_groups.go); Close takes the
// members out of the store's groups. A classic group over the wire and
// a group of the store's coordinator exclude each other
// (GROUP_ID_NOT_FOUND, INCONSISTENT_GROUP_PROTOCOL).
//
// # Transactions
//
// A transactional producer's requests go to the store's transaction
// coordinator through Store.InitTxnProducer, AddTxnPartitions,
// AppendTxnBatch, CommitTxnOffsets and EndTxn, so that it and a
// Store.BeginTxn of the same transactional id fence each other. The
// producer keeps its epoch across its transactions (transaction version
// 1): EndTxn v5 is not served and ApiVersions finalizes no
// transaction.version feature, so franz-go and librdkafka both run
// version 1. While a transaction holds a group's offset of a partition,
// an OffsetFetch with require_stable (KIP-447) gets
// UNSTABLE_OFFSET_COMMIT for it, and the client asks again once the
// transaction has ended.
//
// # Connections
//
// Each connection has one goroutine that reads, decodes and handles
// requests in order and writes their responses in the same order: the
// responses so far before it waits for a request that has not arrived
// whole (as Kafka's SocketServer mutes a connection while its response is
// sent), so that the responses of requests that arrive together go out in
// one write; those before a request that may wait (a long-poll Fetch, a
// JoinGroup) are written before it waits.
//
// A frame is a 4-byte big-endian size and that many bytes; a size over
// Options.MaxRequestBytes, a frame that does not decode, an unknown key, or
// a version out of the served range closes the connection without touching
// the store (an ApiVersions request at an unknown version is answered with
// UNSUPPORTED_VERSION and the served ranges, as Kafka answers it). A frame
// must arrive whole within Options.IdleTimeout of the connection's being
// done with the previous request and the responses before it, and a write
// of responses take no longer than that.
//
// A Fetch response's record batches are not copied: they are sent
// from the segments' memory mappings in one writev with the rest of the
// response, and the segments stay pinned until it is written. A segment
// that retention, compaction, DeleteRecords or DeleteTopic drops
// meanwhile is removed once the response is written, or once its write
// fails or takes longer than Options.IdleTimeout; the bytes sent are the
// ones stored either way.
//
// # Security
//
// Plain TCP without authentication is the default. Options.TLS makes
// every connection speak TLS (Kafka's SSL listener); Options.SASL makes
// every connection authenticate with SASL/PLAIN, SCRAM-SHA-256 or
// SCRAM-SHA-512 first (SASL_PLAINTEXT, or SASL_SSL with TLS), against a
// user -> password map or a callback. Until a client has authenticated,
// only ApiVersions, SaslHandshake and SaslAuthenticate are answered: any
// other request closes the connection, as Kafka closes it, and so does a
// failed authentication, after its SASL_AUTHENTICATION_FAILED answer. The
// TLS handshake and the SASL exchange must end within
// Options.HandshakeTimeout of the accept; their frames are at most 512
// KiB. A session lasts as long as its connection unless
// SASL.SessionLifetime ends it, and the client authenticates again on the
// connection (KIP-368). There are no ACLs: an authenticated user may do
// everything.
package broker
