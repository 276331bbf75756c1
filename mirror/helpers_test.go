package mirror

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratalog/strata"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// newTarget starts a kfake cluster for the test.
func newTarget(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// newSource opens a store in a temporary directory.
func newSource(t *testing.T) *strata.Store {
	t.Helper()
	s, err := strata.Open(t.TempDir(), &strata.Options{CleanerInterval: -1, RetentionCheckInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// sourceRecords returns the records a read_committed consumer reads of
// each partition of a source topic.
func sourceRecords(t *testing.T, s *strata.Store, topic string) [][]strata.Record {
	t.Helper()
	d, err := s.DescribeTopic(topic)
	require.NoError(t, err)
	v := s.View(strata.ReadCommitted)
	out := make([][]strata.Record, len(d.Partitions))
	for p := range d.Partitions {
		off, err := v.ListOffsets(topic, p, strata.Earliest)
		require.NoError(t, err)
		end, err := v.ListOffsets(topic, p, strata.Latest)
		require.NoError(t, err)
		for off < end {
			recs, err := v.Read(t.Context(), topic, p, off, 1000)
			require.NoError(t, err)
			if len(recs) == 0 {
				break
			}
			for _, r := range recs {
				if r.Offset < end {
					out[p] = append(out[p], r)
				}
			}
			off = recs[len(recs)-1].Offset + 1
		}
	}
	return out
}

// targetRecords reads every partition of a target topic read_committed,
// to its last stable offset.
func targetRecords(t *testing.T, brokers []string, topic string, parts int) [][]*kgo.Record {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	adm, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	defer adm.Close()
	ends, err := kadm.NewClient(adm).ListCommittedOffsets(ctx, topic)
	require.NoError(t, err)
	cons := make(map[int32]kgo.Offset, parts)
	left := 0
	for p := range parts {
		e, ok := ends.Lookup(topic, int32(p))
		require.True(t, ok)
		if e.Offset > 0 {
			cons[int32(p)] = kgo.NewOffset().At(0)
			left++
		}
	}
	out := make([][]*kgo.Record, parts)
	if left == 0 {
		return out
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: cons}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	require.NoError(t, err)
	defer cl.Close()
	at := make([]int64, parts)
	for left > 0 {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "reading %s: at %v, want %v", topic, at, ends)
		fs.EachRecord(func(r *kgo.Record) {
			e, _ := ends.Lookup(topic, r.Partition)
			if at[r.Partition] >= e.Offset {
				return
			}
			at[r.Partition] = r.Offset + 1
			if at[r.Partition] >= e.Offset {
				left--
			}
			if !r.Attrs.IsControl() && r.Offset < e.Offset {
				out[r.Partition] = append(out[r.Partition], r)
			}
		})
	}
	return out
}

// requireSameRecords checks that the target topic holds exactly the
// source topic's records, in order, partition by partition.
func requireSameRecords(t *testing.T, s *strata.Store, brokers []string, src, tgt string) {
	t.Helper()
	want := sourceRecords(t, s, src)
	got := targetRecords(t, brokers, tgt, len(want))
	for p := range want {
		require.Equal(t, len(want[p]), len(got[p]), "%s/%d: records on the target", src, p)
		for i, w := range want[p] {
			g := got[p][i]
			require.True(t, sameRecord(w, g), "%s/%d: record %d (source offset %d, target %d):\n want %s\n got  %s",
				src, p, i, w.Offset, g.Offset, fmtSource(w), fmtTarget(g))
		}
	}
}

func sameRecord(w strata.Record, g *kgo.Record) bool {
	if (w.Key == nil) != (g.Key == nil) || !bytes.Equal(w.Key, g.Key) ||
		(w.Value == nil) != (g.Value == nil) || !bytes.Equal(w.Value, g.Value) ||
		w.Timestamp.UnixMilli() != g.Timestamp.UnixMilli() || len(w.Headers) != len(g.Headers) {
		return false
	}
	for i, h := range w.Headers {
		if h.Key != g.Headers[i].Key || !bytes.Equal(h.Value, g.Headers[i].Value) {
			return false
		}
	}
	return true
}

func fmtSource(r strata.Record) string {
	return fmt.Sprintf("key=%q value=%q ts=%d headers=%v", r.Key, r.Value, r.Timestamp.UnixMilli(), r.Headers)
}

func fmtTarget(r *kgo.Record) string {
	return fmt.Sprintf("key=%q value=%q ts=%d headers=%v", r.Key, r.Value, r.Timestamp.UnixMilli(), r.Headers)
}

// requireGroupResumes checks that, on every partition where the source
// group committed an offset, the target group's committed offset resumes at
// the record the source group would read next (or at the end when there is
// none).
func requireGroupResumes(t *testing.T, s *strata.Store, brokers []string, group, src, tgt string) {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	defer cl.Close()
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	require.NoError(t, err)
	want := sourceRecords(t, s, src)
	got := targetRecords(t, brokers, tgt, len(want))
	checked := 0
	for p := range want {
		om, ok := s.Committed(group, src, p)
		if !ok {
			continue
		}
		o, ok := offs.Lookup(tgt, int32(p))
		require.True(t, ok, "group %q has no offset on %s/%d (source offset %d)", group, tgt, p, om.Offset)
		require.NoError(t, o.Err)
		require.Equal(t, om.Metadata, o.Metadata, "metadata")
		// The next record each side would deliver.
		wi := len(want[p])
		for i, r := range want[p] {
			if r.Offset >= om.Offset {
				wi = i
				break
			}
		}
		gi := len(got[p])
		for i, r := range got[p] {
			if r.Offset >= o.At {
				gi = i
				break
			}
		}
		require.Equal(t, wi, gi, "group %q on %s/%d: source offset %d resumes at record %d, target offset %d at record %d",
			group, src, p, om.Offset, wi, o.At, gi)
		checked++
	}
	require.NotZero(t, checked, "group %q committed nothing on %s", group, src)
}

// tsBase is the records' first timestamp: recent, so that no retention
// at either end removes them.
var tsBase = time.Now().Add(-time.Hour).UnixMilli()

func key(i, nkeys int) []byte {
	if nkeys == 0 {
		return fmt.Appendf(nil, "u%d", i)
	}
	return fmt.Appendf(nil, "k%d", i%nkeys)
}

// appendKeyed appends n keyed records with a header to topic, keys from
// the set of nkeys (0: each its own key).
func appendKeyed(t *testing.T, s *strata.Store, topic string, from, n, nkeys int) {
	t.Helper()
	require.NoError(t, appendRecords(s, topic, from, n, nkeys))
}

// appended maps "topic/i" to where appendRecords put record i.
var appended sync.Map

func appendRecords(s *strata.Store, topic string, from, n, nkeys int) error {
	recs := make([]strata.Record, 0, n)
	for i := from; i < from+n; i++ {
		recs = append(recs, strata.Record{
			Key:       key(i, nkeys),
			Value:     fmt.Appendf(nil, "v%d", i),
			Headers:   []strata.Header{{Key: "i", Value: fmt.Appendf(nil, "%d", i)}},
			Timestamp: time.UnixMilli(tsBase + int64(i)),
		})
	}
	for len(recs) > 0 {
		k := min(len(recs), 20)
		pos, err := s.Append(context.Background(), topic, recs[:k]...)
		if err != nil {
			return err
		}
		for j, p := range pos {
			appended.Store(topic+"/"+string(recs[j].Headers[0].Value), p)
		}
		recs = recs[k:]
	}
	return nil
}

// testLogger logs to the test's log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

// waitFor polls cond until it holds, failing the test after 30 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 30 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// fetchOffsets returns a target group's committed offset of partition 0 of
// events.
func fetchOffsets(t *testing.T, brokers []string, group string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	defer cl.Close()
	offs, err := kadm.NewClient(cl).FetchOffsets(testCtx(t, 30*time.Second), group)
	require.NoError(t, err)
	o, ok := offs.Lookup("events", 0)
	require.True(t, ok)
	return o.At
}

// caughtUp reports whether m has copied everything the source has.
func caughtUp(m *Mirror) bool {
	lag := m.Lag()
	for _, l := range lag {
		if l.Lag > 0 {
			return false
		}
	}
	return len(lag) > 0
}

// sourcePosition returns where appendRecords put the target record r.
func sourcePosition(t *testing.T, topic string, r *kgo.Record) strata.Position {
	t.Helper()
	require.NotEmpty(t, r.Headers, "a record appendRecords wrote")
	p, ok := appended.Load(topic + "/" + string(r.Headers[0].Value))
	require.True(t, ok, "record %s of %s not appended", fmtTarget(r), topic)
	return p.(strata.Position)
}

// requireCompactedCopy checks a compacted topic's copy: each target
// record is one appendRecords wrote, on its partition, once and in order;
// every record the source still has is there; and each one the source no
// longer has was superseded there by a later record of its key. Then the
// group resumes on the target at the first copied record at or after its
// source offset.
func requireCompactedCopy(t *testing.T, s *strata.Store, brokers []string, topic, group string) {
	t.Helper()
	want := sourceRecords(t, s, topic)
	got := targetRecords(t, brokers, topic, len(want))
	offs := targetGroupOffsets(t, brokers, group)
	for p := range want {
		at := make(map[int64]strata.Record, len(want[p]))
		latest := make(map[string]int64)
		for _, r := range want[p] {
			at[r.Offset] = r
			latest[string(r.Key)] = r.Offset
		}
		src := make([]int64, len(got[p]))
		seen := 0
		for i, g := range got[p] {
			pos := sourcePosition(t, topic, g)
			require.Equal(t, p, pos.Partition, "%s: record %s on partition %d", topic, fmtTarget(g), p)
			src[i] = pos.Offset
			if i > 0 {
				require.Greater(t, src[i], src[i-1], "%s/%d: source offsets of the copies rise (no duplicate, in order)", topic, p)
			}
			if w, ok := at[pos.Offset]; ok {
				require.True(t, sameRecord(w, g), "%s/%d offset %d: want %s, got %s", topic, p, pos.Offset, fmtSource(w), fmtTarget(g))
				seen++
			} else {
				require.Greater(t, latest[string(g.Key)], pos.Offset, "%s/%d: %s copied, gone from the source, not superseded", topic, p, fmtTarget(g))
			}
		}
		require.Equal(t, len(want[p]), seen, "%s/%d: every source record on the target", topic, p)

		om, ok := s.Committed(group, topic, p)
		if !ok {
			continue
		}
		o, ok := offs.Lookup(topic, int32(p))
		require.True(t, ok, "group %q has no offset on %s/%d", group, topic, p)
		wi := len(got[p])
		for i, x := range src {
			if x >= om.Offset {
				wi = i
				break
			}
		}
		gi := len(got[p])
		for i, g := range got[p] {
			if g.Offset >= o.At {
				gi = i
				break
			}
		}
		require.Equal(t, wi, gi, "group %q on %s/%d: source offset %d, target offset %d", group, topic, p, om.Offset, o.At)
	}
}

func targetGroupOffsets(t *testing.T, brokers []string, group string) kadm.OffsetResponses {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	defer cl.Close()
	offs, err := kadm.NewClient(cl).FetchOffsets(testCtx(t, 30*time.Second), group)
	require.NoError(t, err)
	return offs
}
