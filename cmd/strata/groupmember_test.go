package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/stratalog/strata"
)

// groupMember is the program strata-group-member DIR GROUP TOPIC N READY
// RELEASE of the script tests: it opens the store in DIR, as a service
// would, joins GROUP with a Consumer of TOPIC from its start, polls and
// commits N records, writes the file READY and holds the directory, with
// its consumer in the group, until the file RELEASE exists; then it closes
// the consumer (which leaves the group) and the store. A RELEASE file
// that holds "crash" makes it exit at once instead, as a crash would,
// leaving its membership recorded.
func groupMember() int {
	if len(os.Args) != 7 {
		fmt.Fprintln(os.Stderr, "usage: strata-group-member DIR GROUP TOPIC N READY RELEASE")
		return 2
	}
	dir, group, topicName, ready, release := os.Args[1], os.Args[2], os.Args[3], os.Args[5], os.Args[6]
	n, err := strconv.Atoi(os.Args[4])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncAlways})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c, err := s.Consumer(group, []string{topicName}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, MaxPollRecords: n})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for got := 0; got < n; {
		recs, err := c.Poll(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		got += len(recs)
	}
	if err := c.Commit(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.WriteFile(ready, nil, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(release)
		if err != nil {
			continue
		}
		if string(b) == "crash\n" {
			os.Exit(0)
		}
		if err := c.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := s.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "strata-group-member: no release file within a minute")
	return 1
}
