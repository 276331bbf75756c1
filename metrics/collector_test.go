package metrics_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/metrics"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// epoch is the tests' clock: records are stamped with it and the store
// and the collector read it.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// openStore opens a store in a fresh directory whose clock is *now,
// without background work or fsyncs, so that every figure is the tests'.
func openStore(t testing.TB, now *time.Time) *strata.Store {
	t.Helper()
	s, err := strata.Open(t.TempDir(), &strata.Options{
		Now:                    func() time.Time { return *now },
		Sync:                   strata.SyncNever,
		RetentionCheckInterval: -1,
		CleanerInterval:        -1,
	})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func appendN(t testing.TB, s *strata.Store, topic string, part, n int, ts time.Time) {
	t.Helper()
	for range n {
		_, err := s.AppendTo(context.Background(), topic, part, strata.Record{Key: []byte("k"), Value: []byte("value"), Timestamp: ts})
		require.NoError(t, err)
	}
}

// TestGolden checks the text exposition of a small store: two topics, a
// group that has committed on one of them and lags behind on one
// partition, a fetch, a roll.
func TestGolden(t *testing.T) {
	now := epoch
	s := openStore(t, &now)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}))
	require.NoError(t, s.CreateTopic("audit", strata.TopicConfig{SegmentBytes: 1024}))
	appendN(t, s, "orders", 0, 3, epoch)
	appendN(t, s, "orders", 1, 2, epoch.Add(time.Second))
	appendN(t, s, "audit", 0, 20, epoch)
	require.NoError(t, s.Commit("billing", "orders", 0, 1, ""))
	require.NoError(t, s.Commit("billing", "orders", 1, 2, ""))
	_, err := s.View(strata.ReadUncommitted).ReadBatches("orders", 0, 0, 1<<20, nil)
	require.NoError(t, err)
	now = epoch.Add(90 * time.Second)

	got := exposition(t, metrics.NewCollector(s, &metrics.Options{Now: func() time.Time { return now }}))
	golden := filepath.Join("testdata", "store.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))

	// testutil's comparison, of every metric by name, and its linter of
	// Prometheus' naming conventions.
	c := metrics.NewCollector(s, &metrics.Options{Now: func() time.Time { return now }})
	require.NoError(t, testutil.CollectAndCompare(c, bytes.NewReader(want), metricNames...))
	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	require.Empty(t, problems)
}

// metricNames are the names of the metrics the collector exports.
var metricNames = []string{
	"strata_partition_log_start_offset", "strata_partition_log_end_offset",
	"strata_partition_size_bytes", "strata_partition_segments",
	"strata_partition_appended_batches_total", "strata_partition_appended_records_total",
	"strata_partition_appended_bytes_total", "strata_partition_fetches_total",
	"strata_partition_fetched_bytes_total", "strata_partition_fsyncs_total",
	"strata_partition_rolls_total", "strata_group_committed_offset",
	"strata_group_lag", "strata_group_oldest_unconsumed_age_seconds",
}

// exposition returns what c collects in Prometheus' text format, from a
// pedantic registry, which checks the metrics against their descriptions.
func exposition(t *testing.T, c prometheus.Collector) []byte {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		require.NoError(t, enc.Encode(mf))
	}
	return b.Bytes()
}

// value returns the value of the metric name with the given labels
// (name=value pairs), -1 if it is not there.
func value(t *testing.T, c prometheus.Collector, name string, labels ...string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue metric
				}
			}
			switch {
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Counter != nil:
				return m.Counter.GetValue()
			}
		}
	}
	return -1
}

// TestFiguresMove checks that each figure moves with what it counts.
func TestFiguresMove(t *testing.T) {
	now := epoch
	s := openStore(t, &now)
	ctx := context.Background()
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{SegmentBytes: 1024, Sync: strata.SyncAlways}))
	c := metrics.NewCollector(s, &metrics.Options{Now: func() time.Time { return now }})
	p := []string{"topic", "t", "partition", "0"}
	g := []string{"group", "g", "topic", "t", "partition", "0"}
	get := func(name string, labels []string) float64 { return value(t, c, name, labels...) }

	require.Equal(t, 0.0, get("strata_partition_log_end_offset", p))
	require.Equal(t, 1.0, get("strata_partition_segments", p))
	require.Equal(t, -1.0, get("strata_group_lag", g), "no group yet")

	appendN(t, s, "t", 0, 1, epoch)
	require.Equal(t, 1.0, get("strata_partition_log_end_offset", p))
	require.Equal(t, 1.0, get("strata_partition_appended_batches_total", p))
	require.Equal(t, 1.0, get("strata_partition_appended_records_total", p))
	require.Positive(t, get("strata_partition_appended_bytes_total", p))
	require.Equal(t, get("strata_partition_appended_bytes_total", p), get("strata_partition_size_bytes", p))
	require.Equal(t, 1.0, get("strata_partition_fsyncs_total", p), "SyncAlways")

	_, err := s.AppendTo(ctx, "t", 0, strata.Record{Value: []byte("a")}, strata.Record{Value: []byte("b")})
	require.NoError(t, err)
	require.Equal(t, 2.0, get("strata_partition_appended_batches_total", p))
	require.Equal(t, 3.0, get("strata_partition_appended_records_total", p))

	require.Equal(t, 0.0, get("strata_partition_fetches_total", p))
	b, err := s.View(strata.ReadUncommitted).ReadBatches("t", 0, 0, 1<<20, nil)
	require.NoError(t, err)
	require.Equal(t, 1.0, get("strata_partition_fetches_total", p))
	require.Equal(t, float64(len(b)), get("strata_partition_fetched_bytes_total", p))

	appendN(t, s, "t", 0, 30, epoch.Add(time.Minute))
	require.Positive(t, get("strata_partition_rolls_total", p))
	require.Greater(t, get("strata_partition_segments", p), 1.0)
	require.Equal(t, 33.0, get("strata_partition_log_end_offset", p))

	require.NoError(t, s.DeleteRecords("t", 0, 2))
	require.Equal(t, 2.0, get("strata_partition_log_start_offset", p))

	// A group: its commit, its lag, the age of the record at its offset.
	require.NoError(t, s.Commit("g", "t", 0, 2, ""))
	now = epoch.Add(time.Hour)
	require.Equal(t, 2.0, get("strata_group_committed_offset", g))
	require.Equal(t, 31.0, get("strata_group_lag", g))
	require.Equal(t, time.Hour.Seconds(), get("strata_group_oldest_unconsumed_age_seconds", g), "offset 2 is of epoch")
	require.NoError(t, s.Commit("g", "t", 0, 3, ""))
	require.Equal(t, 30.0, get("strata_group_lag", g))
	require.Equal(t, 59*time.Minute.Seconds(), get("strata_group_oldest_unconsumed_age_seconds", g), "offset 3 is of epoch+1m")
	require.NoError(t, s.Commit("g", "t", 0, 33, ""))
	require.Equal(t, 0.0, get("strata_group_lag", g))
	require.Equal(t, 0.0, get("strata_group_oldest_unconsumed_age_seconds", g), "nothing unconsumed")

	// NoGroups leaves the groups out.
	require.Equal(t, -1.0, value(t, metrics.NewCollector(s, &metrics.Options{NoGroups: true}), "strata_group_lag", g...))

	// A deleted topic goes, with its group figures.
	require.NoError(t, s.DeleteTopic("t"))
	require.Equal(t, -1.0, get("strata_partition_log_end_offset", p))
	require.Equal(t, -1.0, get("strata_group_lag", g))
}

// TestClosedStore: a scrape of a closed store fails with ErrClosed, and
// does not panic.
func TestClosedStore(t *testing.T) {
	now := epoch
	s := openStore(t, &now)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	appendN(t, s, "t", 0, 1, epoch)
	require.NoError(t, s.Commit("g", "t", 0, 0, ""))
	require.NoError(t, s.Close())
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(metrics.NewCollector(s, nil)))
	_, err := reg.Gather()
	require.ErrorIs(t, err, strata.ErrClosed)
}

// TestReadOnlyStore: a collector of a read-only store (as an exporter
// beside the owning process would run) follows the owner's appends and
// commits.
func TestReadOnlyStore(t *testing.T) {
	dir := t.TempDir()
	owner, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever, RetentionCheckInterval: -1, CleanerInterval: -1})
	require.NoError(t, err)
	defer owner.Close()
	require.NoError(t, owner.CreateTopic("t", strata.TopicConfig{}))
	appendN(t, owner, "t", 0, 4, epoch)
	require.NoError(t, owner.Commit("g", "t", 0, 1, ""))

	ro, err := strata.Open(dir, &strata.Options{ReadOnly: true, RefreshInterval: time.Millisecond})
	require.NoError(t, err)
	defer ro.Close()
	c := metrics.NewCollector(ro, nil)
	g := []string{"group", "g", "topic", "t", "partition", "0"}
	require.Equal(t, 4.0, value(t, c, "strata_partition_log_end_offset", "topic", "t"))
	require.Equal(t, 3.0, value(t, c, "strata_group_lag", g...))

	appendN(t, owner, "t", 0, 2, epoch)
	require.NoError(t, owner.Commit("g", "t", 0, 5, ""))
	for deadline := time.Now().Add(10 * time.Second); value(t, c, "strata_group_lag", g...) != 1; {
		require.True(t, time.Now().Before(deadline), "the read-only store's lag does not follow the owner's")
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, 5.0, value(t, c, "strata_group_committed_offset", g...))
	require.Equal(t, 6.0, value(t, c, "strata_partition_log_end_offset", "topic", "t"))
}

// TestScrapeWhileAppending scrapes while appenders, a committer and
// retention run, for the race detector: a scrape shares no lock with
// them that it could hold them up on, and sees consistent figures (an
// end offset never behind the start).
func TestScrapeWhileAppending(t *testing.T) {
	now := epoch
	s := openStore(t, &now)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 4, SegmentBytes: 1024, RetentionBytes: 4096}))
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(metrics.NewCollector(s, nil)))
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Go(func() {
			for i := range 300 {
				_, err := s.AppendTo(context.Background(), "t", p, strata.Record{Value: []byte("v"), Timestamp: epoch})
				assert.NoError(t, err)
				if p == 0 && i%10 == 0 {
					assert.NoError(t, s.Commit("g", "t", 0, int64(i), ""))
					_, err := s.EnforceRetention(context.Background())
					assert.NoError(t, err)
				}
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			mfs, err := reg.Gather()
			if !assert.NoError(t, err) {
				return
			}
			start, end := map[string]float64{}, map[string]float64{}
			for _, mf := range mfs {
				for _, m := range mf.GetMetric() {
					key := m.GetLabel()[0].GetValue() + "/" + m.GetLabel()[1].GetValue()
					switch mf.GetName() {
					case "strata_partition_log_start_offset":
						start[key] = m.GetGauge().GetValue()
					case "strata_partition_log_end_offset":
						end[key] = m.GetGauge().GetValue()
					}
				}
			}
			for k, v := range start {
				assert.LessOrEqual(t, v, end[k], k)
			}
		}
	})
	wg.Wait()
}
