package strata_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"testing"

	"github.com/stratalog/strata"
)

// openStackEnv names the store a child of TestOpenStack reopens.
const openStackEnv = "STRATA_TEST_OPEN_STACK"

// openStackLimit is the stack that a clean Open and a point read must fit
// in, the test's own frames included: the stack growStack grows a new
// goroutine's to, so that Open grows it once, at its start, and not again
// deep in its path.
const openStackLimit = 16 << 10

// TestOpenStack reopens a closed store of one topic in a child process
// whose stacks are limited to openStackLimit while Open and a point read of
// the last record run: a deeper call path kills the child with a stack
// overflow, whose trace names it.
func TestOpenStack(t *testing.T) {
	if dir := os.Getenv(openStackEnv); dir != "" {
		openStackChild(t, dir)
		return
	}
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := writeOpenStackStore(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenStack$", "-test.count=1")
	cmd.Env = append(os.Environ(), openStackEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("open-stack ok")) {
		t.Fatalf("a clean Open and a point read do not fit in %d bytes of stack: %v\n%s", openStackLimit, err, out)
	}
}

// writeOpenStackStore writes TestOpenStack's store, closed, and returns its
// directory: one topic of one partition, 5000 records in batches of 100.
func writeOpenStackStore(t *testing.T) string {
	dir := t.TempDir()
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTopic("t", strata.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	recs := make([]strata.Record, 100)
	for i := range recs {
		recs[i] = strata.Record{Key: []byte(fmt.Sprint("key-", i)), Value: bytes.Repeat([]byte{'v'}, 100)}
	}
	for range 50 { // past a few index entries
		if _, err := s.AppendTo(context.Background(), "t", 0, recs...); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// openStackChild is TestOpenStack's child: Open, GetInto of the last
// record, with the stack limited.
func openStackChild(t *testing.T, dir string) {
	buf := make([]byte, 0, 1<<10)
	prev := debug.SetMaxStack(openStackLimit)
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	var r strata.Record
	if err == nil {
		r, err = s.GetInto("t", 0, 4999, buf)
	}
	debug.SetMaxStack(prev)
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte("key-99"); !bytes.Equal(r.Key, want) {
		t.Fatalf("record 4999 has key %q, want %q", r.Key, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fmt.Println("open-stack ok")
}
