// Package mirror copies topics of a Strata store to a Kafka cluster, for
// the move from one machine to Kafka: a Mirror creates each topic on the
// target with the source's partition count and configs (by Kafka's names),
// copies every record to the same partition number with its key, value,
// headers and timestamp, in order, and translates the committed offsets of
// consumer groups so that a consumer switched to Kafka resumes at the
// record it would have read next.
//
// # Exactly once
//
// Each batch of records is produced in a Kafka transaction (the mirror's
// TransactionalID) together with its offset syncs: records of the syncs
// topic (Options.SyncsTopic) that map source offsets to target offsets, as
// MirrorMaker 2's offset-syncs topic does (KIP-382), the last of each
// partition being the mirror's progress. A crash, a broker error or a retry
// leaves either both or neither; a mirror that starts reads the syncs
// read_committed and resumes after the last committed record, and by
// loading its producer id fences an older mirror of the same id (whose
// open transaction Kafka aborts). With Options.NoTransactions the producer
// is idempotent only and delivery is at least once.
//
// # Offsets
//
// Target offsets equal source offsets only while the source has no gaps:
// compaction, aborted transactions and transaction markers at the source,
// and the markers of the mirror's own transactions at the target, move
// them apart. The syncs record where they move, so translation is exact: a
// group that committed source offset x is committed on the target at the
// offset of the first copied record at or after x, never past a record the
// group had not consumed. Group offsets are committed only to target groups
// without active members, and only forward.
//
// # The way back
//
// Pull copies a cluster's topics into a store, each batch in a store
// transaction with its progress.
package mirror
