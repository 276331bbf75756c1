package strata_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/stratalog/strata"
)

// dirImage returns every file under dir with its bytes, for a before/after
// comparison that shows nothing was written.
func dirImage(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameImage(t *testing.T, before, after map[string]string) {
	t.Helper()
	var diff []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			diff = append(diff, "removed "+k)
		} else if w != v {
			diff = append(diff, "changed "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			diff = append(diff, "added "+k)
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Fatalf("the directory changed: %v", diff)
	}
}

func roOpts() *strata.Options {
	return &strata.Options{ReadOnly: true, RefreshInterval: time.Nanosecond}
}

func roValue(off int64) string { return fmt.Sprintf("value-%d", off) }

func appendN(t *testing.T, s *strata.Store, topicName string, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if _, err := s.AppendTo(context.Background(), topicName, 0, strata.Record{Key: []byte(fmt.Sprint(i % 7)), Value: []byte(roValue(int64(i)))}); err != nil {
			t.Fatal(err)
		}
	}
}

// readAll reads the partition from offset to its end and checks offsets
// dense and values as appendN wrote them.
func readAll(t *testing.T, s *strata.Store, topicName string, from int64) int64 {
	t.Helper()
	next := from
	for {
		recs, err := s.Read(context.Background(), topicName, 0, next, 100)
		if err != nil {
			t.Fatalf("read at %d: %v", next, err)
		}
		if len(recs) == 0 {
			return next
		}
		for _, r := range recs {
			if r.Offset != next || string(r.Value) != roValue(r.Offset) {
				t.Fatalf("record at %d: offset %d value %q", next, r.Offset, r.Value)
			}
			next++
		}
	}
}

func TestReadOnlyLive(t *testing.T) {
	dir := t.TempDir()
	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.CreateTopic("t", strata.TopicConfig{SegmentBytes: 4096}); err != nil {
		t.Fatal(err)
	}
	appendN(t, w, "t", 0, 50)
	r, err := strata.Open(dir, roOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := readAll(t, r, "t", 0); got != 50 {
		t.Fatalf("read up to %d, want 50", got)
	}
	// Tailing, across rolls.
	appendN(t, w, "t", 50, 200)
	if got := readAll(t, r, "t", 50); got != 250 {
		t.Fatalf("read up to %d after the appends, want 250", got)
	}
	end, err := r.ListOffsets("t", 0, strata.Latest)
	if err != nil || end != 250 {
		t.Fatalf("end offset %d, %v; want 250", end, err)
	}
	// A new topic shows.
	if err := w.CreateTopic("u", strata.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	appendN(t, w, "u", 0, 3)
	if got := readAll(t, r, "u", 0); got != 3 {
		t.Fatalf("new topic read up to %d, want 3", got)
	}
	// Config changes and new partitions show.
	if err := w.AlterTopicConfig("u", strata.TopicConfig{Retention: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := w.CreatePartitions("u", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AppendTo(context.Background(), "u", 2, strata.Record{Value: []byte("p2")}); err != nil {
		t.Fatal(err)
	}
	d, err := r.DescribeTopic("u")
	if err != nil || d.Config.Retention != time.Hour || len(d.Partitions) != 3 || d.Partitions[2].EndOffset != 1 {
		t.Fatalf("the reader describes the altered topic as %+v, %v", d, err)
	}
	// A deleted one goes.
	if err := w.DeleteTopic("u"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ListOffsets("u", 0, strata.Latest); !errors.Is(err, strata.ErrUnknownTopic) {
		t.Fatalf("deleted topic: %v, want ErrUnknownTopic", err)
	}
	// A waiting fetch sees a later append.
	done := make(chan []strata.Record)
	go func() {
		recs, _ := r.Fetch(context.Background(), "t", 0, 250, 10, 10*time.Second)
		done <- recs
	}()
	appendN(t, w, "t", 250, 1)
	select {
	case recs := <-done:
		if len(recs) != 1 || recs[0].Offset != 250 {
			t.Fatalf("fetch got %v", recs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting fetch saw nothing")
	}
}

// TestReadOnlyRefusesWrites calls every writing Store method on a ReadOnly
// store: each fails with ErrReadOnly, and the directory is byte for byte
// as it was.
func TestReadOnlyRefusesWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := strata.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CreateTopic("t", strata.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	if err := w.CreateTopic("c", strata.TopicConfig{CleanupPolicy: strata.CleanupCompact}); err != nil {
		t.Fatal(err)
	}
	appendN(t, w, "t", 0, 5)
	appendN(t, w, "c", 0, 5)
	if err := w.Commit("g", "t", 0, 1, ""); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	before := dirImage(t, dir)
	s, err := strata.Open(dir, roOpts())
	if err != nil {
		t.Fatal(err)
	}
	if !s.ReadOnly() {
		t.Fatal("ReadOnly() is false")
	}
	rec := strata.Record{Key: []byte("k"), Value: []byte("v")}
	calls := map[string]func() error{
		"Append":          func() error { _, err := s.Append(ctx, "t", rec); return err },
		"AppendTo":        func() error { _, err := s.AppendTo(ctx, "t", 0, rec); return err },
		"AppendIfEnd":     func() error { _, err := s.AppendIfEnd(ctx, "t", 0, 5, rec); return err },
		"AppendIfLast":    func() error { _, err := s.AppendIfLast(ctx, "t", []byte("k"), -1, rec); return err },
		"AppendBatch":     func() error { _, _, err := s.AppendBatch(ctx, "t", 0, []byte{1}); return err },
		"NewProducerID":   func() error { _, err := s.NewProducerID(); return err },
		"BeginTxn":        func() error { _, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"}); return err },
		"InitTxnProducer": func() error { _, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "x"}); return err },
		"AddTxnPartitions": func() error {
			return s.AddTxnPartitions(ctx, strata.TxnProducer{ID: "x"}, strata.TopicPartition{Topic: "t"})
		},
		"AppendTxnBatch":         func() error { _, _, err := s.AppendTxnBatch(ctx, strata.TxnProducer{ID: "x"}, "t", 0, nil); return err },
		"CommitTxnOffsets":       func() error { return s.CommitTxnOffsets(ctx, strata.TxnProducer{ID: "x"}, "g", nil) },
		"EndTxn":                 func() error { return s.EndTxn(ctx, strata.TxnProducer{ID: "x"}, true) },
		"Commit":                 func() error { return s.Commit("g", "t", 0, 2, "") },
		"CommitAsMember":         func() error { return s.CommitAsMember("g", "g-1", 1, nil) },
		"Compact":                func() error { _, err := s.Compact(ctx, "c"); return err },
		"CreateTopic":            func() error { return s.CreateTopic("new", strata.TopicConfig{}) },
		"CreatePartitions":       func() error { return s.CreatePartitions("t", 3) },
		"AlterTopicConfig":       func() error { return s.AlterTopicConfig("t", strata.TopicConfig{Retention: time.Hour}) },
		"DeleteGroupOffsets":     func() error { return s.DeleteGroupOffsets("g") },
		"DeletePartitionOffsets": func() error { return s.DeletePartitionOffsets("g", []strata.TopicPartition{{Topic: "t"}}) },
		"ClaimGroup":             func() error { _, err := s.ClaimGroup("g"); return err },
		"HeartbeatGroup": func() error {
			_, err := s.HeartbeatGroup("g", strata.GroupHeartbeat{Topics: []string{"t"}})
			return err
		},
		"LeaveGroup":            func() error { return s.LeaveGroup("g", "g-1") },
		"PublishGroup":          func() error { return s.PublishGroup("g", &strata.GroupMetadata{}) },
		"DeleteRecords":         func() error { return s.DeleteRecords("t", 0, 1) },
		"DeleteTopic":           func() error { return s.DeleteTopic("t") },
		"EnsureTopic":           func() error { return s.EnsureTopic("t", strata.TopicConfig{}) },
		"EnsureOffsetsTopic":    func() error { return s.EnsureOffsetsTopic() },
		"EnforceRetention":      func() error { _, err := s.EnforceRetention(ctx); return err },
		"EnforceTopicRetention": func() error { _, err := s.EnforceTopicRetention(ctx, "t"); return err },
		"ResetOffsets":          func() error { _, err := s.ResetOffsets("g", "t", strata.ToEarliest, false); return err },
		"Producer": func() error {
			p := s.Producer(strata.ProducerOptions{})
			defer p.Close()
			return p.Produce(ctx, "t", rec, nil)
		},
		// A Consumer reads; its commits are refused.
		"Consumer": func() error {
			c, err := s.Consumer("g2", []string{"t"}, strata.ConsumerOptions{})
			if err != nil {
				return err
			}
			defer c.Close()
			return c.CommitOffsets(ctx, map[strata.TopicPartition]int64{{Topic: "t"}: 3})
		},
	}
	// Every other method reads, and works.
	first := func(seq iter.Seq2[strata.Record, error]) error {
		for _, err := range seq {
			return err
		}
		return nil
	}
	reads := map[string]func() error{
		"AbortedTxns":      func() error { _, err := s.AbortedTxns("t", 0, 0, 5); return err },
		"Committed":        func() error { _, _ = s.Committed("g", "t", 0); return nil },
		"DescribeGroup":    func() error { _, err := s.DescribeGroup(ctx, "g"); return err },
		"DescribeTopic":    func() error { _, err := s.DescribeTopic("t"); return err },
		"Dir":              func() error { s.Dir(); return nil },
		"Fetch":            func() error { _, err := s.Fetch(ctx, "t", 0, 0, 1, time.Millisecond); return err },
		"Get":              func() error { _, err := s.Get("t", 0, 0); return err },
		"GetInto":          func() error { _, err := s.GetInto("t", 0, 0, nil); return err },
		"GroupMembers":     func() error { s.GroupMembers("g"); return nil },
		"Groups":           func() error { s.Groups(); return nil },
		"Lag":              func() error { _, err := s.Lag(ctx, "g", "t"); return err },
		"ListGroups":       func() error { _, err := s.ListGroups(); return err },
		"ListOffsetTime":   func() error { _, err := s.ListOffsetTime("t", 0, strata.Latest); return err },
		"ListOffsets":      func() error { _, err := s.ListOffsets("t", 0, strata.Latest); return err },
		"PartitionFor":     func() error { _, err := s.PartitionFor("t", []byte("k")); return err },
		"PendingTxnOffset": func() error { s.PendingTxnOffset("g", "t", 0); return nil },
		"Read":             func() error { _, err := s.Read(ctx, "t", 0, 0, 1); return err },
		"ReadOnly":         func() error { s.ReadOnly(); return nil },
		"Records":          func() error { return first(s.Records(ctx, "t", 0, 0)) },
		"Scan":             func() error { return first(s.Scan("t", 0, 0)) },
		"Stats":            func() error { s.Stats(); return nil },
		"Topics":           func() error { s.Topics(); return nil },
		"Transactions":     func() error { _, err := s.Transactions(ctx); return err },
		"View":             func() error { _, err := s.View(strata.ReadCommitted).Read(ctx, "t", 0, 0, 1); return err },
		"Close":            func() error { return nil }, // last, below
	}
	requireCovers(t, reflect.TypeOf(s), calls, reads)
	for name, call := range reads {
		if err := call(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, strata.ErrReadOnly) {
			t.Errorf("%s: %v, want ErrReadOnly", name, err)
			continue
		}
		requireOnePrefix(t, err.Error())
		requireSentinelTextsOnce(t, err)
	}
	// Reads work, a dry run too.
	if got := readAll(t, s, "t", 0); got != 5 {
		t.Fatalf("read up to %d, want 5", got)
	}
	if _, err := s.ResetOffsets("g", "t", strata.ToEarliest, true); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if off, ok := s.Committed("g", "t", 0); !ok || off.Offset != 1 {
		t.Fatalf("committed %v %v, want 1", off, ok)
	}
	if _, err := s.Read(ctx, "t", 0, 0, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.View(strata.ReadCommitted).Read(ctx, "t", 0, 0, 1); err != nil {
		t.Fatalf("ReadCommitted read: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sameImage(t, before, dirImage(t, dir))
}

// TestReadOnlyOpenChangesNothing opens read-only a directory with no lock
// file, a missing one, and a crashed one with a torn tail: nothing is
// created, and the reader serves up to the last whole batch.
func TestReadOnlyOpenChangesNothing(t *testing.T) {
	if _, err := strata.Open(filepath.Join(t.TempDir(), "missing"), roOpts()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing directory: %v, want ErrNotExist", err)
	}
	dir := t.TempDir()
	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CreateTopic("t", strata.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	appendN(t, w, "t", 0, 20)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// What a crash leaves: no clean-shutdown marker, and
	// the last batch torn.
	torn := copyDir(t, dir)
	log := filepath.Join(torn, "t-0", "00000000000000000000.log")
	fi, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(log, fi.Size()-5); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(torn, ".clean-shutdown")); err != nil {
		t.Fatal(err)
	}
	before := dirImage(t, torn)
	r, err := strata.Open(torn, roOpts())
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r, "t", 0); got != 19 {
		t.Fatalf("read up to %d, want 19 (the last batch is torn)", got)
	}
	if end, _ := r.ListOffsets("t", 0, strata.Latest); end != 19 {
		t.Fatalf("end %d, want 19", end)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	sameImage(t, before, dirImage(t, torn))
}

// copyDir copies dir's files to a new directory.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	for rel, data := range dirImage(t, dir) {
		path := filepath.Join(to, rel)
		if rel[len(rel)-1] == '/' {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// roValues reads the partition from 0 at level iso and returns the values.
func roValues(t *testing.T, s *strata.Store, iso strata.Isolation) []string {
	t.Helper()
	recs, err := s.View(iso).Read(context.Background(), "t", 0, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, string(r.Value))
	}
	return out
}

// TestReadOnlyReadCommitted follows the owner's transactions: at every
// step, a reader reads at each level what the owner reads (an open
// transaction holds ReadCommitted reads back, an aborted one is never seen
// by them, a committed one shows), and so does a reader opened afterwards.
func TestReadOnlyReadCommitted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.CreateTopic("t", strata.TopicConfig{SegmentBytes: 2048}); err != nil {
		t.Fatal(err)
	}
	put := func(v string) {
		if _, err := w.AppendTo(ctx, "t", 0, strata.Record{Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	pad := string(make([]byte, 300))
	put("a")
	r, err := strata.Open(dir, &strata.Options{ReadOnly: true, RefreshInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	same := func(step string) {
		t.Helper()
		for _, iso := range []strata.Isolation{strata.ReadCommitted, strata.ReadUncommitted} {
			want, got := roValues(t, w, iso), roValues(t, r, iso)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s, %v: the reader reads %d records, the owner %d", step, iso, len(got), len(want))
			}
		}
	}
	same("before any transaction")
	tx, err := w.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 { // more than a batch: written before the end
		if err := tx.AppendTo(ctx, "t", 0, strata.Record{Value: []byte(fmt.Sprint("aborted", i, pad))}); err != nil {
			t.Fatal(err)
		}
	}
	put("b")
	if lso, _ := w.View(strata.ReadCommitted).ListOffsets("t", 0, strata.Latest); lso > 1 {
		t.Fatalf("the owner's last stable offset is %d: the test needs the transaction's batches written", lso)
	}
	same("with a transaction open")
	if err := tx.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	same("after the abort")
	tx, err = w.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 { // across rolls
		if err := tx.AppendTo(ctx, "t", 0, strata.Record{Value: []byte(fmt.Sprint("c", i, pad))}); err != nil {
			t.Fatal(err)
		}
	}
	same("with the second open")
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	same("after the commit")
	if n := len(roValues(t, r, strata.ReadCommitted)); n != 32 {
		t.Fatalf("read committed %d records, want 32", n)
	}
	r2, err := strata.Open(dir, &strata.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if states, err := r2.Transactions(ctx); err != nil || len(states) != 1 || states[0].ID != "x" {
		t.Fatalf("a reader's Transactions: %+v, %v; want the id x", states, err)
	}
	for _, iso := range []strata.Isolation{strata.ReadCommitted, strata.ReadUncommitted} {
		if got, want := roValues(t, r2, iso), roValues(t, w, iso); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("a reader opened last, %v: %d records, the owner %d", iso, len(got), len(want))
		}
	}
}

// readRecords reads the whole partition of s from its start, as pairs of
// offset and value.
func readRecords(t *testing.T, s *strata.Store, topicName string) []string {
	t.Helper()
	start, err := s.ListOffsets(topicName, 0, strata.Earliest)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for next := start; ; {
		recs, err := s.Read(context.Background(), topicName, 0, next, 100)
		if err != nil {
			t.Fatalf("read at %d: %v", next, err)
		}
		if len(recs) == 0 {
			return out
		}
		for _, r := range recs {
			out = append(out, fmt.Sprintf("%d=%s", r.Offset, r.Value))
			next = r.Offset + 1
		}
	}
}

// sameOffsets checks that the reader sees the owner's start and end.
func sameOffsets(t *testing.T, step string, w, r *strata.Store, topicName string) {
	t.Helper()
	for _, spec := range []strata.OffsetSpec{strata.Earliest, strata.Latest} {
		want, err := w.ListOffsets(topicName, 0, spec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.ListOffsets(topicName, 0, spec)
		if err != nil || got != want {
			t.Fatalf("%s: the reader's offset %v is %d (%v), the owner's %d", step, spec, got, err, want)
		}
	}
}

// TestReadOnlyRemovals: retention, DeleteRecords and compaction remove and
// replace segments under a reader, which then reads what the owner reads;
// a read below the new start is ErrOffsetOutOfRange.
func TestReadOnlyRemovals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever, RetentionCheckInterval: -1, CleanerInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.CreateTopic("t", strata.TopicConfig{SegmentBytes: 1024, RetentionBytes: 3000}); err != nil {
		t.Fatal(err)
	}
	if err := w.CreateTopic("c", strata.TopicConfig{SegmentBytes: 1024, CleanupPolicy: strata.CleanupCompact, MinCleanableDirtyRatio: 0.01}); err != nil {
		t.Fatal(err)
	}
	appendN(t, w, "t", 0, 300)
	appendN(t, w, "c", 0, 300)
	r, err := strata.Open(dir, roOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A reader in the middle of the first segment.
	it := r.Records(ctx, "t", 0, 0)
	next, stop := iterPull(it)
	defer stop()
	for i := range 3 {
		rec, err, _ := next()
		if err != nil || rec.Offset != int64(i) {
			t.Fatalf("record %d: %v %v", i, rec.Offset, err)
		}
	}
	sameOffsets(t, "before retention", w, r, "t")
	if n, err := w.EnforceRetention(ctx); err != nil || n == 0 {
		t.Fatalf("retention removed %d segments: %v", n, err)
	}
	sameOffsets(t, "after retention", w, r, "t")
	if _, err := r.Read(ctx, "t", 0, 3, 10); !errors.Is(err, strata.ErrOffsetOutOfRange) {
		t.Fatalf("read in a removed segment: %v, want ErrOffsetOutOfRange", err)
	}
	// The iterator in the removed segment ends with ErrOffsetOutOfRange
	// or goes on with records as they were: never a wrong one.
	for {
		rec, err, ok := next()
		if !ok || err != nil {
			if err != nil && !errors.Is(err, strata.ErrOffsetOutOfRange) {
				t.Fatalf("the iterator in a removed segment: %v", err)
			}
			break
		}
		if string(rec.Value) != roValue(rec.Offset) {
			t.Fatalf("the iterator in a removed segment read %d=%q", rec.Offset, rec.Value)
		}
		if rec.Offset == 299 {
			break
		}
	}
	if got, want := readRecords(t, r, "t"), readRecords(t, w, "t"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after retention the reader reads %d records, the owner %d", len(got), len(want))
	}
	start, _ := w.ListOffsets("t", 0, strata.Earliest)
	if err := w.DeleteRecords("t", 0, start+5); err != nil {
		t.Fatal(err)
	}
	sameOffsets(t, "after DeleteRecords", w, r, "t")

	before := readRecords(t, r, "c")
	if len(before) != 300 {
		t.Fatalf("compacted topic: %d records before the cleaning", len(before))
	}
	st, err := w.Compact(ctx, "c")
	if err != nil || st.Superseded == 0 {
		t.Fatalf("compaction removed %d records: %v", st.Superseded, err)
	}
	sameOffsets(t, "after compaction", w, r, "c")
	if got, want := readRecords(t, r, "c"), readRecords(t, w, "c"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after compaction the reader reads %d records, the owner %d", len(got), len(want))
	}
	appendN(t, w, "c", 300, 10)
	if got, want := readRecords(t, r, "c"), readRecords(t, w, "c"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after more appends the reader reads %d records, the owner %d", len(got), len(want))
	}
}

// iterPull is iter.Pull2 for a record iterator.
func iterPull(seq func(func(strata.Record, error) bool)) (func() (strata.Record, error, bool), func()) {
	next, stop := iter.Pull2(seq)
	return next, stop
}

// TestReadOnlyConcurrentReaders: goroutines of one ReadOnly store tail a
// topic while the owner appends, rolls and applies retention, so that the
// refreshes swap segments under readers in flight (for -race).
func TestReadOnlyConcurrentReaders(t *testing.T) {
	dir := t.TempDir()
	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever, RetentionCheckInterval: -1, CleanerInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.CreateTopic("t", strata.TopicConfig{SegmentBytes: 4096, RetentionBytes: 12 << 10}); err != nil {
		t.Fatal(err)
	}
	r, err := strata.Open(dir, &strata.Options{ReadOnly: true, RefreshInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 3000
	if raceEnabled {
		n = 1500
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wrote := make(chan error, 1)
	go func() {
		for i := 0; i < n; i += 3 {
			recs := []strata.Record{{Value: []byte(roValue(int64(i)))}, {Value: []byte(roValue(int64(i + 1)))}, {Value: []byte(roValue(int64(i + 2)))}}
			if _, err := w.AppendTo(ctx, "t", 0, recs...); err != nil {
				wrote <- err
				return
			}
			if i%90 == 0 {
				if _, err := w.EnforceRetention(ctx); err != nil {
					wrote <- err
					return
				}
			}
		}
		wrote <- nil
	}()
	t.Run("readers", func(t *testing.T) {
		for i := range 4 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				tail(ctx, t, r, "t", int64(n), true, false)
			})
		}
	})
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
}

// TestReadOnlyOwnerRecovers: a reader follows a crashed directory while
// the next owner opens it and recovery cuts the torn tail the reader
// stopped before (the file shrinks under the reader's mapping), then
// appends: the reader reads on, every record as written.
func TestReadOnlyOwnerRecovers(t *testing.T) {
	dir := t.TempDir()
	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CreateTopic("t", strata.TopicConfig{SegmentBytes: 4096}); err != nil {
		t.Fatal(err)
	}
	appendN(t, w, "t", 0, 100)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	torn := copyDir(t, dir)
	segs, err := filepath.Glob(filepath.Join(torn, "t-0", "*.log"))
	if err != nil || len(segs) < 2 {
		t.Fatalf("segments %v, %v", segs, err)
	}
	last := segs[len(segs)-1]
	fi, err := os.Stat(last)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(last, fi.Size()-5); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(torn, ".clean-shutdown")); err != nil {
		t.Fatal(err)
	}
	r, err := strata.Open(torn, roOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := readAll(t, r, "t", 0); got != 99 {
		t.Fatalf("read up to %d, want 99", got)
	}
	w, err = strata.Open(torn, &strata.Options{Sync: strata.SyncNever, Logger: logOnFailure(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if fi2, err := os.Stat(last); err != nil || fi2.Size() >= fi.Size()-5 {
		t.Fatalf("recovery left the torn segment at %d bytes (%v), want it cut below %d", fi2.Size(), err, fi.Size()-5)
	}
	appendN(t, w, "t", 99, 200)
	if got := readAll(t, r, "t", 0); got != 299 {
		t.Fatalf("after the owner's recovery and appends the reader read up to %d, want 299", got)
	}
}
