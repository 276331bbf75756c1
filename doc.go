// Package strata is an embeddable log store with Apache Kafka's storage
// model: topics split into partitions, each partition an append-only log of
// immutable records addressed by dense offsets, stored in segment files that
// hold Kafka's own RecordBatch v2 bytes with Kafka's offset and time indexes.
//
// The storage layers are in place: package [github.com/stratalog/strata/log]
// is the record-batch format, [github.com/stratalog/strata/index] the
// memory-mapped indexes and [github.com/stratalog/strata/segment] one segment
// file with its indexes. The partition log, the engine (Open, topics, Append,
// Read), consumer groups, retention and compaction build on them; see the
// README's status table for what works today.
package strata
