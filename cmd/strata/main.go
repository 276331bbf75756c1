// Command strata is Kafka's everyday tools for a Strata directory: topics,
// console produce and consume, consumer groups, log dumps, verification
// and repair, on-demand retention and compaction, and serve, a
// Kafka-compatible broker on the directory's files, and mirror, which
// moves topics and group positions to a Kafka cluster.
//
// It is a module of its own, so that users of the library never download
// its dependencies. From a checkout of the repository, install it with
//
//	cd cmd/strata && go install .
//
// and run strata --help, or strata <command> --help, for the commands,
// their flags and examples. Commands that only read (topics list and
// describe, consume, groups list and describe, dump, verify) open the
// directory read-only, so they work on a directory that a running process
// holds; commands that write refuse such a directory and say which
// process holds it.
//
// # Exit status
//
//	0  success
//	1  the operation failed (an I/O error, a failure of the store)
//	2  bad usage or input: an unknown command or flag, a malformed value,
//	   an unknown topic, partition or group, an offset or time out of range
//	3  the directory is locked by another process (a write was refused)
//	4  verify or dump found damage
//
// Errors are one line on stderr, prefixed "strata: ", never a stack trace.
package main

import "os"

func main() { os.Exit(run(os.Args[1:])) }
