package strata_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stratalog/strata"
)

// The environment of TestReadOnlyProcesses' children.
const (
	roDirEnv   = "STRATA_RO_STORE"
	roCountEnv = "STRATA_RO_RECORDS"
	roLagEnv   = "STRATA_RO_LAG" // the reader waits for the writer to end before it reads on
)

// roProcRecords is how many records the writer child appends to each topic.
func roProcRecords() int {
	if raceEnabled {
		return 3000
	}
	return 20000
}

// TestReadOnlyProcesses runs one writer process under load — small
// segments, retention and the cleaner running in the background — and
// three reader processes that open the directory ReadOnly while it writes
// and tail both topics to the end (one of them stops after a few records
// until the writer is done, by which time retention has removed the
// segment it was reading): each checks that the offsets it reads
// rise (densely in the topic that is not compacted, but across a restart
// at the new start when retention removed its position), that every value
// is the one the writer wrote for its offset, and that it reaches the
// last one.
func TestReadOnlyProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	s, err := strata.Open(dir, &strata.Options{Logger: logOnFailure(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTopic("t", strata.TopicConfig{SegmentBytes: 8 << 10, RetentionBytes: 24 << 10}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTopic("c", strata.TopicConfig{SegmentBytes: 8 << 10, CleanupPolicy: strata.CleanupCompact, MinCleanableDirtyRatio: 0.01}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	n := roProcRecords()
	env := []string{roDirEnv + "=" + dir, roCountEnv + "=" + strconv.Itoa(n)}
	child := func(test string, more ...string) (*exec.Cmd, *syncBuffer) {
		cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
		cmd.Env = append(append(os.Environ(), env...), more...)
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, out
	}
	var readers []*exec.Cmd
	var outs []*syncBuffer
	for i := range 3 {
		cmd, out := child("TestReadOnlyProcessesReader", fmt.Sprintf("%s=%v", roLagEnv, i == 0))
		readers, outs = append(readers, cmd), append(outs, out)
	}
	writer, wout := child("TestReadOnlyProcessesWriter")
	if err := writer.Wait(); err != nil {
		t.Fatalf("the writer: %v\n%s", err, wout.String())
	}
	for i, cmd := range readers {
		if err := cmd.Wait(); err != nil {
			t.Errorf("reader %d: %v\n%s", i, err, outs[i].String())
		} else {
			t.Logf("reader %d:\n%s", i, outs[i].String())
		}
	}
}

// TestReadOnlyProcessesWriter is TestReadOnlyProcesses' writer: it appends
// the records in batches of random sizes while retention and the cleaner
// run every few milliseconds.
func TestReadOnlyProcessesWriter(t *testing.T) {
	dir := os.Getenv(roDirEnv)
	if dir == "" {
		t.Skip("a child of TestReadOnlyProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv(roCountEnv))
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever, RetentionCheckInterval: 20 * time.Millisecond, CleanerInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"t", "c"} {
		for i := 0; i < n; {
			k := min(n-i, 1+rand.IntN(8))
			recs := make([]strata.Record, k)
			for j := range recs {
				off := int64(i + j)
				recs[j] = strata.Record{Key: []byte(strconv.Itoa(int(off % 50))), Value: []byte(roValue(off))}
			}
			if _, err := s.AppendTo(ctx, name, 0, recs...); err != nil {
				t.Fatal(err)
			}
			i += k
		}
	}
	if _, err := s.EnforceRetention(ctx); err != nil {
		t.Fatal(err)
	}
	// The end: the lagging reader reads on when it sees the offsets
	// topic.
	if err := s.Commit("g", "t", 0, int64(n), ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReadOnlyProcessesReader is TestReadOnlyProcesses' reader.
func TestReadOnlyProcessesReader(t *testing.T) {
	dir := os.Getenv(roDirEnv)
	if dir == "" {
		t.Skip("a child of TestReadOnlyProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv(roCountEnv))
	s, err := strata.Open(dir, &strata.Options{ReadOnly: true, RefreshInterval: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	lag := os.Getenv(roLagEnv) == "true"
	for _, name := range []string{"t", "c"} {
		read, restarts := tail(ctx, t, s, name, int64(n), name == "t", lag)
		fmt.Printf("topic %s: %d records read, %d restarts at a new start\n", name, read, restarts)
		if lag && name == "t" && restarts == 0 {
			t.Fatal("the lagging reader never found its segment removed")
		}
		lag = false
	}
}

// writerDone reports whether the writer's commit, its last write, is in
// the offsets topic.
func writerDone(s *strata.Store) bool {
	parts := s.Stats().Topics[strata.ConsumerOffsetsTopic]
	return len(parts) > 0 && parts[0].EndOffset > 0
}

// tail reads the topic from its start up to offset n-1, following the
// writer, and checks what it reads; dense says no offset may be missing
// but where retention moved the start past the reader; lag makes it wait,
// after a few records, until the writer is done.
func tail(ctx context.Context, t *testing.T, s *strata.Store, name string, n int64, dense, lag bool) (read, restarts int) {
	t.Helper()
	prev := int64(-1)
	for {
		start, err := s.ListOffsets(name, 0, strata.Earliest)
		if err != nil {
			t.Fatal(err)
		}
		from := max(start, prev+1)
		restarted := false
		for rec, err := range s.Records(ctx, name, 0, from) {
			if errors.Is(err, strata.ErrOffsetOutOfRange) {
				restarts++
				restarted = true
				break
			}
			if err != nil {
				t.Fatalf("topic %s after offset %d: %v", name, prev, err)
			}
			switch {
			case rec.Offset <= prev:
				t.Fatalf("topic %s: offset %d after %d", name, rec.Offset, prev)
			case dense && rec.Offset != prev+1 && rec.Offset != from:
				t.Fatalf("topic %s: offset %d after %d (started at %d)", name, rec.Offset, prev, from)
			case string(rec.Value) != roValue(rec.Offset):
				t.Fatalf("topic %s: offset %d holds %q", name, rec.Offset, rec.Value)
			}
			prev = rec.Offset
			read++
			if prev == n-1 {
				return read, restarts
			}
			if lag && read == 20 {
				// Hold the position until the writer is done.
				for !writerDone(s) {
					if ctx.Err() != nil {
						t.Fatal("the writer never finished")
					}
					time.Sleep(time.Millisecond)
				}
			}
		}
		if !restarted {
			t.Fatalf("topic %s: the records ended after offset %d: %v", name, prev, ctx.Err())
		}
	}
}
