// Package strata is an embeddable log store with Apache Kafka's storage
// model: topics split into partitions, each partition an append-only log of
// immutable records addressed by offsets that only rise (dense as appends
// assign them; compaction and transactions leave gaps), stored in segment
// files that hold Kafka's own RecordBatch v2 bytes with Kafka's offset and
// time indexes.
//
// # Basics
//
// Open a directory (one Store per directory: a second Open fails with
// ErrLocked, naming the process that holds it; other processes read it
// with Options.ReadOnly, which takes no lock, writes nothing and follows
// what the owner appends), create topics with CreateTopic (or EnsureTopic, which leaves
// an existing one alone), append with Append (routed by Kafka's murmur2
// partitioner for keyed records, see PartitionFor, a sticky partition for
// the others) or AppendTo (one partition), or with AppendIfEnd and
// AppendIfLast, which append only if the partition's end offset, or the
// offset of a key's last record, is the one the caller read to
// (optimistic concurrency: ErrWrongOffset otherwise), and read with
// Read, Fetch (which waits for records), Get and GetInto (one record by offset), the Scan
// iterator (up to the end offset as of the call) or the Records iterator
// (which tails the partition). A Producer batches many small
// appends as Kafka's producer does, idempotent by default: its retries
// never write a batch twice (package typed encodes Go values for it,
// and decodes them from a partition); a Consumer reads as a member of a
// consumer group, whose partitions an Assignor shares (RangeAssignor,
// RoundRobinAssignor, StickyAssignor), and commits its offsets. BeginTxn
// opens a transaction (Kafka's): records to any partitions and a group's
// offsets, committed or aborted together, whole or not at all under
// ReadCommitted (Options.Isolation, ConsumerOptions.Isolation, View), also
// after a crash. Retention and compaction run in
// the background and on demand (EnforceRetention, Compact). Close the Store
// when done.
//
// # Durability
//
// Append returns once its batches are written to the operating system, so
// a record it acknowledged survives a crash of the process. What survives a
// power loss or an OS crash depends on the flush policy (Options.Sync for
// the store, TopicConfig.Sync per topic): under SyncAlways, every record
// whose Append returned (Append waits for an fsync, which concurrent
// appenders share); under SyncEvery(d), the default with d = 1 s, the
// records older than d; under SyncNever, which never fsyncs, what the
// operating system wrote back on its own. The README lists which
// operations fsync under each policy. Open after a crash recovers every
// partition: it never serves a torn or corrupt batch, and cuts a torn tail
// at the last valid batch.
//
// # Caveats
//
// Records returned by Read, Fetch, Get and Consumer.Poll are the caller's:
// their bytes are copies. A record from GetInto aliases the buffer passed
// in. A record yielded by Records or Scan is valid only until the loop body
// returns.
//
// Readers see a partition up to its high watermark (ListOffsets(Latest)):
// a record is visible once its Append returns, after its fsync under
// SyncAlways. ReadCommitted readers see it up to its last stable offset,
// and skip the records of aborted transactions. A damaged batch fails a
// read only when the read reaches it (ErrCorrupt); the records before it
// are returned. A nil context is
// context.Background(). See the README for the full durability contract,
// the errors and the files on disk.
package strata
