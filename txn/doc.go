// Package txn is Kafka's transaction coordinator state, in a process: the
// states a transactional id goes through ([State], with Kafka's allowed
// transitions) and the __transaction_state record format ([AppendKey],
// [AppendValue], [Decode]). It imports nothing from the rest of Strata but
// internal/wire, the field reader it shares with package group; the store
// writes the records to an internal compacted topic of one partition and
// replays them at open.
//
// # States
//
// A transactional id starts Empty. The first partition it writes to moves
// it to Ongoing (every partition is added to the record before the first
// write to it). Commit is PrepareCommit, durable before any marker is
// written, then COMMIT markers in every partition of the transaction,
// then CompleteCommit; Abort is PrepareAbort, ABORT markers,
// CompleteAbort. A store that opens finds the last record of each id and
// finishes what a crash interrupted: PrepareCommit is completed,
// PrepareAbort and Ongoing are aborted. Dead is an id that expired; its
// record is a tombstone. The transitions are Kafka's
// (transaction-coordinator's TransactionState.java): see [State.CanFollow].
//
// # The __transaction_state format
//
// One record per transactional id: the latest is its state, and compaction
// keeps only that one. All integers are big-endian; a string is an int16
// byte length followed by that many bytes of UTF-8. The key (Kafka's
// TransactionLogKey, after the int16 coordinator record type 0):
//
//	+-------+--------+----------------------+
//	| int16 | int16  | transactional id     |
//	| 0     | length | bytes                |
//	+-------+--------+----------------------+
//
// The value, version 0 (TransactionLogValue, the version written):
//
//	+---------+-------------+----------------+------------+--------+
//	| int16   | int64       | int16          | int32      | int8   |
//	| version | producer id | producer epoch | timeout ms | status |
//	+---------+-------------+----------------+------------+--------+
//	+---------------------------------------------------+--------------+-------------+
//	| int32 topics (-1: null), per topic:               | int64        | int64       |
//	|   string topic, int32 count, count × int32 part   | last update  | start time  |
//	+---------------------------------------------------+--------------+-------------+
//
// The status is the [State]'s number; the times are milliseconds since
// the Unix epoch. Empty has a null partition list. Version 1 (the
// flexible version Kafka writes with transaction version 2, KIP-890) has
// the same fields with compact strings and arrays (an unsigned varint of
// the length plus one; 0 for a null array) and tagged fields after each
// topic and at the end: tag 0 PreviousProducerId, tag 1 NextProducerId
// (int64, default -1), the others skipped. [Decode] reads both.
package txn
