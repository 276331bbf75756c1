// Package compat holds the tests that check Strata's log format against
// other implementations of Kafka's: franz-go's record-batch parser and its
// compressors and decompressors. It is a module of its own, so that users
// of Strata never download what only these tests need.
package compat
