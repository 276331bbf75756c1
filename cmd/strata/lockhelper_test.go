package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stratalog/strata"
)

// holdLock is the program strata-hold-lock DIR READY RELEASE [TOPIC] of
// the script tests: it opens the store in DIR, as a service would, writes
// the file READY, and holds the directory until the file RELEASE exists;
// with TOPIC, it appends a record "live-N" to its partition 0 every 10 ms
// meanwhile (to a topic "growing", which it gives a second partition, to
// both).
func holdLock() int {
	if len(os.Args) != 4 && len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: strata-hold-lock DIR READY RELEASE [TOPIC]")
		return 2
	}
	s, err := strata.Open(os.Args[1], nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	if err := os.WriteFile(os.Args[2], nil, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i, deadline := 0, time.Now().Add(time.Minute); time.Now().Before(deadline); i++ {
		time.Sleep(10 * time.Millisecond)
		if _, err := os.Stat(os.Args[3]); err == nil {
			return 0
		}
		if len(os.Args) == 5 {
			name := os.Args[4]
			// The tenth record on, a topic "growing" has a second
			// partition, which gets every other record.
			part := 0
			if name == "growing" && i >= 10 {
				if i == 10 {
					if err := s.CreatePartitions(name, 2); err != nil {
						fmt.Fprintln(os.Stderr, err)
						return 1
					}
				}
				part = i % 2
			}
			if _, err := s.AppendTo(context.Background(), name, part, strata.Record{Value: fmt.Appendf(nil, "live-%d", i)}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	}
	fmt.Fprintln(os.Stderr, "strata-hold-lock: no release file within a minute")
	return 1
}

// waitFile is the script command waitfile PATH: it waits, for up to a
// minute, until PATH exists.
func waitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile PATH")
	}
	path := ts.MkAbs(args[0])
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	ts.Fatalf("%s did not appear within a minute", path)
}

// exitStatus is the script command exitstatus N PROG ARGS...: it runs PROG
// as exec does and fails unless its exit status is N.
func exitStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitstatus N PROG ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitstatus %q: not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}
