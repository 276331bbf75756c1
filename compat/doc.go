// Package compat holds the tests that check Strata's log format against
// other implementations of Kafka's: franz-go's record-batch parser and its
// compressors and decompressors, the batches librdkafka (through kcat,
// producing to franz-go's kfake cluster) compresses with every codec, and
// batches compressed as Kafka's Java producer compresses them
// (testdata/java/Compress.java, with snappy-java and zstd-jni). It
// is a module of its own, so that users of Strata never download what only
// these tests need. Golden batches from each are kept in testdata/, so the
// tests read them without kcat; with kcat installed they also check the
// batches it makes now.
package compat
