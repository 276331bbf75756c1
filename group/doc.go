// Package group is Kafka's consumer groups, in a process: the partition
// assignors, the committed offsets and their __consumer_offsets record
// format, and the [Coordinator] that runs each group's membership and
// incremental rebalances. It imports nothing from the rest of Strata but
// internal/wire (the field reader it shares with package txn); the store
// wires it to an internal compacted topic.
//
// # Committed offsets
//
// A committed offset is the offset of the next record to consume (the last
// processed one plus one), with an optional metadata string
// ([OffsetAndMetadata]). [Coordinator.Commit] appends every commit to an
// [OffsetLog] before it becomes visible; the store implements the log by
// appending the records [EncodeCommit] makes to __consumer_offsets, and
// at open feeds what [DecodeCommit] reads back to [Coordinator.Replay].
// Kafka's compaction keeps the latest record per (group, topic,
// partition); [Coordinator.DeleteOffsets] writes tombstones. The format is
// Kafka's own (below), so the bytes can be read by Kafka's tools.
// [OffsetReset] and [Lag] are auto.offset.reset and consumer lag.
//
// # Transactional commits
//
// A consume-transform-produce loop commits its consumed offsets inside
// the transaction that writes its results ([Coordinator.CommitTxn]), as
// Kafka's TxnOffsetCommit does: the commits go to the log as one
// transactional batch of the transaction's producer id
// ([TxnOffsetLog.AppendTxn]) and stay pending — Committed does not return
// them, and [Coordinator.PendingTxn] says they are there — until the
// transaction ends. [Coordinator.EndTxn] writes the producer's COMMIT or
// ABORT marker to the log and then makes the pending offsets the group's
// committed offsets, or drops them. A pending offset that commits takes
// effect unless the partition's offset was set after it was written (by a
// commit, or by another transaction that committed a later one): as in
// Kafka (GroupMetadata.completePendingTxnOffsetCommit), the record the log
// holds last wins. Deleting a partition's offsets drops its pending ones
// too.
//
// A store replays a transactional batch with [Coordinator.ReplayTxn] and
// a marker with [Coordinator.CompleteTxn], in log order, so a replay ends
// with the offsets and pending offsets the live Coordinator had; the
// offsets of a transaction without a marker stay pending, for the
// transaction's coordinator to end once it has recovered.
//
// # The __consumer_offsets format
//
// Kafka keeps committed offsets in the compacted topic __consumer_offsets,
// one record per (group, topic, partition): the latest record for a key is
// the committed offset, and a record with a null value (a tombstone)
// deletes it. All integers are big-endian; a string is an int16 byte
// length followed by that many bytes of UTF-8.
//
// The key, version 1 (versions 0 and 1 are the same OffsetCommitKey; Kafka
// uses 2 for group metadata and 3 and up for KIP-848's records, which
// [DecodeCommit] reports as [ErrNotOffsetCommit]):
//
//	+---------+-----------+-------+-----------+-------+-----------+
//	| int16   | int16     | group | int16     | topic | int32     |
//	| version | group len | bytes | topic len | bytes | partition |
//	+---------+-----------+-------+-----------+-------+-----------+
//
// The value, version 3 (the version written; Kafka's default since 2.1):
//
//	+---------+--------+--------------+--------------+----------+------------------+
//	| int16   | int64  | int32        | int16        | metadata | int64            |
//	| version | offset | leader epoch | metadata len | bytes    | commit timestamp |
//	+---------+--------+--------------+--------------+----------+------------------+
//
// The leader epoch is always written as -1 (none: Strata has no replicas)
// and the commit timestamp is in milliseconds since the Unix epoch.
//
// A commit that carries the id of its topic (OffsetAndMetadata.TopicID) is
// written as Kafka 4.1 writes it, in the flexible version 4: as version 3,
// but the metadata is a compact string (an unsigned varint of its length
// plus one, then the bytes), and tagged fields follow — a count, then per
// field an unsigned varint tag, size and that many bytes — with the 16
// bytes of the topic id as tag 0 (Kafka's TopicId, KAFKA-19141):
//
//	... | varint | metadata | int64     | 01    | 00  | 10   | 16 bytes |
//	... | len+1  | bytes    | commit ts | count | tag | size | topic id |
//
// DecodeCommit also reads the other value versions Kafka has written:
//
//	v0, v2  offset, metadata, commit timestamp
//	v1      offset, metadata, commit timestamp, int64 expire timestamp (ignored)
//	v3      offset, leader epoch, metadata, commit timestamp
//	v4      as above; tagged fields other than the topic id are skipped
//
// For example, group "g", topic "t", partition 3, offset 42, metadata "m",
// committed at 1700000000000 ms:
//
//	key   00 01  00 01 67  00 01 74  00 00 00 03
//	value 00 03  00 00 00 00 00 00 00 2a  ff ff ff ff  00 01 6d  00 00 01 8b cf e5 68 00
//
// # Group metadata
//
// Kafka also keeps each group's membership in __consumer_offsets: a
// GroupMetadata record per group ([GroupMetadata]), written when a
// generation's assignment is complete and when the group loses its last
// member, and a tombstone when the group is deleted. A Coordinator whose
// log is a [MetadataLog] writes one at every rebalance, and package
// broker publishes those of its classic groups ([Coordinator.PublishMetadata]);
// compaction keeps the latest per group. The key is version 2 (which
// [DecodeCommit] skips as [ErrNotOffsetCommit]):
//
//	+---------+-----------+-------+
//	| int16   | int16     | group |
//	| 00 02   | group len | bytes |
//	+---------+-----------+-------+
//
// The value, version 3 (Kafka's since 2.3; a nullable string has length
// -1 for null, bytes an int32 length):
//
//	int16 version | string protocol_type | int32 generation
//	nullable string protocol | nullable string leader
//	int64 current_state_timestamp (-1: unknown)
//	int32 member count, then per member:
//	  string member_id | nullable string group_instance_id
//	  string client_id | string client_host
//	  int32 rebalance_timeout_ms | int32 session_timeout_ms
//	  bytes subscription | bytes assignment
//
// Versions 0 to 2 lack the instance id, 0 and 1 the timestamp, 0 the
// rebalance timeout; version 4 is version 3 with compact (varint length
// plus one) strings, arrays and bytes and tagged fields after each member
// and at the end. [DecodeGroupMetadata] reads them all. A consumer
// group's subscription and assignment are Kafka's consumer protocol
// ([AppendSubscription], [AppendAssignment]), which Kafka's tools decode.
// The record of an empty group has no members and a null protocol and
// leader.
//
// # Membership and the consumer's protocol
//
// A consumer in a group drives the [Coordinator] from its poll loop:
//
//  1. Join(group, topics) returns its MemberRef (member id, generation).
//     The group rebalances: the assignor computes a new target
//     assignment and the generation goes up.
//  2. On every poll, Sync(group, id). It is the heartbeat (a member that
//     does not Sync for Options.SessionTimeout is evicted), and it returns
//     the generation to commit with, the partitions newly assigned
//     (start fetching at the committed offset, or as the reset policy
//     says), and the partitions to revoke.
//  3. For partitions to revoke: stop fetching them, Commit their
//     positions, then Revoked(group, id, parts). Until Revoked the member
//     still owns them; their new owner gets them at its next Sync. A
//     member that holds them longer than Options.RebalanceTimeout is
//     evicted.
//  4. Commit(group, MemberRef{id, generation of the last Sync}, offsets)
//     at any time, for partitions it owns.
//  5. On close: commit, then Leave(group, id); its partitions are freed at
//     once.
//
// A call that fails with [ErrFenced] means the member is gone (evicted or
// left) or used an old generation: it drops every partition without
// committing and joins again, under a new member id.
//
// Only Sync hands out partitions, and only partitions nobody owns; only
// Revoked, Leave and eviction take them away. So within a group no
// partition is ever owned by two members, even while a rebalance is
// under way, and once every member has synced, revoked and synced again,
// each owns exactly its share of the target. A consumer that follows the
// protocol therefore never fetches a partition another member of its
// group is still fetching, and never commits over it.
//
// # Assignors
//
// The members of a consumer group share the partitions of the topics they
// subscribe to. At every rebalance one party (in Kafka, the group leader)
// runs an [Assignor]: a pure function from the members (their ids,
// subscriptions and, for [Sticky], what they owned before) and the
// partition count of each topic to an [Assignment], the partitions each
// member consumes until the next rebalance.
//
// Every assignor here obeys Kafka's rules:
//
//   - Every partition of a topic that at least one member subscribes to is
//     assigned, to exactly one member: within a group a partition has at
//     most one consumer.
//   - A partition only goes to a member subscribed to its topic.
//   - Members outnumbering the partitions they could take are idle: they
//     get nothing (an empty list; every member has an entry).
//   - Each member's list is sorted by topic, then partition number.
//   - The result depends only on the input, never on the order of the
//     members slice or on map iteration.
//
// # Member order
//
// [Range] and [RoundRobin] walk the members in Kafka's order: static
// members (those with an InstanceID, Kafka's group.instance.id) first,
// sorted by InstanceID, then dynamic members sorted by ID. Static members
// therefore keep their place in the order when they restart with a new
// member id.
//
// # The three assignors
//
// With two members C0 and C1 both subscribed to topics t0 and t1 of three
// partitions each:
//
//	Range       C0 [t0-0 t0-1 t1-0 t1-1]   C1 [t0-2 t1-2]
//	RoundRobin  C0 [t0-0 t0-2 t1-1]        C1 [t0-1 t1-0 t1-2]
//	Sticky      as balanced as RoundRobin, and after a rebalance it keeps
//	            as many of each member's previous partitions as balance allows
//
// [Range] assigns each topic on its own, in contiguous runs, favouring the
// first members. [RoundRobin] deals all partitions in (topic, partition)
// order round the members, skipping those not subscribed. [Sticky] balances
// first and then minimises movement; Member.Owned and Member.Generation
// tell it who owned what.
//
// # Caveats
//
// Member ids, instance ids and topics are compared as Go strings (bytewise,
// that is by Unicode code point). Java compares UTF-16 code units, which
// differs only where one string has a character above U+FFFF and the other
// one in U+E000–U+FFFF at the same position.
//
// Sticky is Kafka's eager StickyAssignor: a partition may move straight
// from one member to another within one rebalance. Kafka's
// CooperativeStickyAssignor, which first revokes and hands partitions out
// in a second rebalance, is not provided. Sticky computes its balance and
// the number of partitions kept exactly (a min-cost flow), where the Java
// assignor searches heuristically; with equal subscriptions both give
// counts within one of each other and keep what the quotas allow. Where
// several assignments are equally good, Sticky may pick a different one
// than the Java client. Rack awareness is not modelled.
//
// The Coordinator runs membership in memory: its [MetadataLog] records it
// as a description, and after a restart every consumer joins again. A
// store that closes ends its members' membership first
// ([Coordinator.LeaveAll]); after a crash, the members a replayed record
// lists are gone ([Coordinator.EndStaleMembership]). It has no static
// membership (group.instance.id) and no offset expiry
// (offsets.retention.minutes). Metadata is limited in bytes, where Kafka
// counts UTF-16 units. The Coordinator
// starts no goroutines: it checks session and rebalance deadlines against
// Options.Now whenever it is called, so a group's dead members are evicted
// at the next call on that group (or at [Coordinator.Expire]).
package group
