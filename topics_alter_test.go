package strata_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/vfs"
)

// TestCreatePartitions grows a topic: the new partitions are empty and
// writable, keys hash over the new count, a Producer made before sees
// them, Lag lists them, and the count survives a reopen.
func TestCreatePartitions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	for i := range 10 {
		_, err := s.Append(ctx, "t", rec(fmt.Sprint("k", i), "old"))
		require.NoError(t, err)
	}
	p := s.Producer(strata.ProducerOptions{Linger: time.Millisecond})
	require.NoError(t, p.Produce(ctx, "t", rec("k0", "before"), nil))
	require.NoError(t, p.Flush(ctx))

	require.NoError(t, s.CreatePartitions("t", 5))
	d, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 5)
	require.Equal(t, 5, d.Config.Partitions)
	for _, pd := range d.Partitions[2:] {
		require.Zero(t, pd.EndOffset, "partition %d is new", pd.Partition)
	}

	// Keys hash over 5 now; the Producer made before routes there too.
	key := keyFor(t, 5, func(part int) bool { return part >= 2 })
	got, err := s.PartitionFor("t", []byte(key))
	require.NoError(t, err)
	require.Equal(t, topic.KeyPartition([]byte(key), 5), got)
	var pos strata.Position
	require.NoError(t, p.Produce(ctx, "t", rec(key, "after"), func(ps strata.Position, err error) {
		require.NoError(t, err)
		pos = ps
	}))
	require.NoError(t, p.Flush(ctx))
	require.NoError(t, p.Close())
	require.Equal(t, got, pos.Partition)
	r, err := s.Get("t", got, pos.Offset)
	require.NoError(t, err)
	require.Equal(t, "after", string(r.Value))

	require.NoError(t, s.Commit("g", "t", 0, 1, ""))
	lag, err := s.Lag(ctx, "g", "t")
	require.NoError(t, err)
	require.Len(t, lag, 5)

	require.NoError(t, s.Close())
	s, err = strata.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	d, err = s.DescribeTopic("t")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 5)
	r, err = s.Get("t", got, pos.Offset)
	require.NoError(t, err)
	require.Equal(t, "after", string(r.Value))
}

// keyFor returns a key whose partition over n partitions satisfies ok.
func keyFor(t *testing.T, n int, ok func(int) bool) string {
	t.Helper()
	for i := range 1000 {
		if k := fmt.Sprint("key-", i); ok(topic.KeyPartition([]byte(k), n)) {
			return k
		}
	}
	t.Fatal("no key found")
	return ""
}

// TestCreatePartitionsBadInput: a count not above the current one, over
// the maximum, an unknown or internal topic are refused with their
// sentinel and a reason, and change nothing on disk.
func TestCreatePartitionsBadInput(t *testing.T) {
	m := vfs.NewMem()
	s, err := strata.Open("data", onFS(m, &strata.Options{}))
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 3}))
	require.NoError(t, s.Commit("g", "t", 0, 0, ""))
	before, err := vfs.ReadFile(m, filepath.Join("data", "topics.json"))
	require.NoError(t, err)
	ops := m.Ops()
	for _, tc := range []struct {
		name  string
		total int
		is    error
		says  string
	}{
		{"t", 3, strata.ErrInvalidConfig, "has 3 partitions, asked for 3"},
		{"t", 2, strata.ErrInvalidConfig, "can only grow"},
		{"t", 0, strata.ErrInvalidConfig, "asked for 0"},
		{"t", -1, strata.ErrInvalidConfig, "asked for -1"},
		{"t", topic.MaxPartitions + 1, strata.ErrInvalidConfig, fmt.Sprint("up to ", topic.MaxPartitions)},
		{"nope", 4, strata.ErrUnknownTopic, "nope"},
		{"bad/name", 4, strata.ErrInvalidTopic, "bad/name"},
		{strata.ConsumerOffsetsTopic, 60, strata.ErrReservedTopic, strata.ConsumerOffsetsTopic},
	} {
		err := s.CreatePartitions(tc.name, tc.total)
		require.ErrorIs(t, err, tc.is, "%s %d", tc.name, tc.total)
		require.ErrorContains(t, err, tc.says)
	}
	require.Equal(t, ops, m.Ops(), "no file operation")
	after, err := vfs.ReadFile(m, filepath.Join("data", "topics.json"))
	require.NoError(t, err)
	require.Equal(t, before, after)
	d, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 3)
}

// TestCreatePartitionsCrash crashes a CreatePartitions at every file
// operation it makes: the reopened store has the topic with its old count
// or its new one, every record kept, and growing it (again) works, with
// the new partitions empty.
func TestCreatePartitionsCrash(t *testing.T) {
	ctx := context.Background()
	opts := &strata.Options{Sync: strata.SyncAlways, Logger: slog.New(slog.DiscardHandler)}
	small := strata.TopicConfig{Partitions: 2, SegmentBytes: 64 << 10, MaxIndexBytes: 4 << 10}
	setup := func() (*vfs.Mem, *strata.Store) {
		m := vfs.NewMem()
		s, err := strata.Open("data", onFS(m, opts))
		require.NoError(t, err)
		require.NoError(t, s.CreateTopic("t", small))
		for part := range 2 {
			_, err := s.AppendTo(ctx, "t", part, rec("k", "v0"), rec("k", "v1"))
			require.NoError(t, err)
		}
		return m, s
	}
	m, s := setup()
	before := condOpCount(m)
	require.NoError(t, s.CreatePartitions("t", 4))
	total := condOpCount(m) - before
	require.NoError(t, s.Close())

	counts := map[int]int{}
	crashPoints(t, total, 1, func(k, torn int) {
		at := fmt.Sprintf("k=%d torn=%d", k, torn)
		m, s := setup()
		m.SetInjector(vfs.FailAfter(k, condCrashOps...))
		_ = s.CreatePartitions("t", 4)
		after := crashedWay(m, k, torn)
		_ = s.Close()
		s, err := strata.Open("data", onFS(after, opts))
		require.NoError(t, err, at)
		d, err := s.DescribeTopic("t")
		require.NoError(t, err, at)
		n := len(d.Partitions)
		require.Contains(t, []int{2, 4}, n, at)
		counts[n]++
		for part := range 2 {
			require.Equal(t, int64(2), d.Partitions[part].EndOffset, "%s: partition %d", at, part)
		}
		if n == 2 {
			require.NoError(t, s.CreatePartitions("t", 4), at)
		}
		d, err = s.DescribeTopic("t")
		require.NoError(t, err, at)
		require.Len(t, d.Partitions, 4, at)
		for part := 2; part < 4; part++ {
			require.Zero(t, d.Partitions[part].EndOffset, "%s: partition %d is new", at, part)
			_, err := s.AppendTo(ctx, "t", part, rec("k", "new"))
			require.NoError(t, err, at)
		}
		require.NoError(t, s.Close(), at)
	})
	require.Positive(t, counts[2], "some crashes kept the old count")
	require.Positive(t, counts[4], "some crashes kept the new count")
}

// TestCreatePartitionsStaleDirectory: a directory of a partition beyond
// the registry's count (a CreatePartitions a crash stopped, with data
// somebody put there) does not come back as the new partition's data.
func TestCreatePartitionsStaleDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	require.NoError(t, s.CreateTopic("u", strata.TopicConfig{}))
	_, err = s.AppendTo(ctx, "u", 0, rec("k", "stale"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	// u-0, with a record, becomes t-2.
	require.NoError(t, os.Rename(filepath.Join(dir, "u-0"), filepath.Join(dir, "t-2")))
	s, err = strata.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreatePartitions("t", 3))
	end, err := s.ListOffsets("t", 2, strata.Latest)
	require.NoError(t, err)
	require.Zero(t, end)
}

// TestAlterTopicConfig changes a topic's retention live (retention then
// applies it) and durably; a fixed setting or a bad value is
// ErrInvalidConfig naming it, and changes nothing.
func TestAlterTopicConfig(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	opts := &strata.Options{Now: func() time.Time { return now }}
	s, err := strata.Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{SegmentBytes: 64 << 10, MaxIndexBytes: 4 << 10}))
	old := strata.Record{Key: []byte("k"), Value: make([]byte, 40<<10), Timestamp: now.Add(-48 * time.Hour)}
	_, err = s.AppendTo(ctx, "t", 0, old)
	require.NoError(t, err)
	d, err := s.DescribeTopic("t")
	require.NoError(t, err)

	cfg := d.Config
	cfg.Retention = time.Hour
	cfg.MinCompactionLag = time.Minute
	require.NoError(t, s.AlterTopicConfig("t", cfg))
	d2, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.Equal(t, cfg, d2.Config)

	for name, change := range map[string]func(c *strata.TopicConfig){
		"SegmentBytes":  func(c *strata.TopicConfig) { c.SegmentBytes = 1 << 20 },
		"CleanupPolicy": func(c *strata.TopicConfig) { c.CleanupPolicy = strata.CleanupCompact },
		"Partitions":    func(c *strata.TopicConfig) { c.Partitions = 3 },
		"MaxBatchBytes": func(c *strata.TopicConfig) { c.MaxBatchBytes = 1000 },
	} {
		bad := cfg
		change(&bad)
		err := s.AlterTopicConfig("t", bad)
		require.ErrorIs(t, err, strata.ErrInvalidConfig, name)
		require.ErrorContains(t, err, name)
		require.ErrorContains(t, err, "fixed once the topic is created")
	}
	bad := cfg
	bad.Retention = -5
	require.ErrorIs(t, s.AlterTopicConfig("t", bad), strata.ErrInvalidConfig)
	require.ErrorIs(t, s.AlterTopicConfig("nope", cfg), strata.ErrUnknownTopic)
	require.ErrorIs(t, s.AlterTopicConfig(strata.ConsumerOffsetsTopic, cfg), strata.ErrReservedTopic)
	d3, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.Equal(t, cfg, d3.Config, "the refused changes changed nothing")

	// The shorter retention applies: the active segment is not deleted, so
	// roll it with a record of now, then the old one goes.
	_, err = s.AppendTo(ctx, "t", 0, strata.Record{Key: []byte("k"), Value: make([]byte, 40<<10), Timestamp: now})
	require.NoError(t, err)
	_, err = s.EnforceRetention(ctx)
	require.NoError(t, err)
	start, err := s.ListOffsets("t", 0, strata.Earliest)
	require.NoError(t, err)
	require.Positive(t, start, "the 48-hour-old record went under 1-hour retention")

	// Zero fields are their defaults again.
	cfg.Retention, cfg.MinCompactionLag = 0, 0
	require.NoError(t, s.AlterTopicConfig("t", cfg))
	require.NoError(t, s.Close())
	s, err = strata.Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	d4, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.Equal(t, d.Config, d4.Config, "back to the defaults, after a reopen")
}

// TestAlterTopicConfigDurable: an altered retention is there after a
// reopen.
func TestAlterTopicConfigDurable(t *testing.T) {
	s := stratatest.OpenOnDisk(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	d, err := s.DescribeTopic("t")
	require.NoError(t, err)
	d.Config.Retention, d.Config.RetentionBytes = -1, 1<<30
	require.NoError(t, s.AlterTopicConfig("t", d.Config))
	dir := s.Dir()
	require.NoError(t, s.Close())
	s, err = strata.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	d2, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.Equal(t, time.Duration(-1), d2.Config.Retention)
	require.Equal(t, int64(1<<30), d2.Config.RetentionBytes)
}

// TestCreatePartitionsConcurrent grows a topic while a Producer, a Txn and
// appends write to it and readers list it: every record is acknowledged
// and found where it was acknowledged (run with -race).
func TestCreatePartitionsConcurrent(t *testing.T) {
	ctx := context.Background()
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	p := s.Producer(strata.ProducerOptions{Linger: time.Millisecond})
	defer p.Close()
	var acked []strata.Position
	var mu sync.Mutex
	var appended atomic.Int64
	l := newLoops()
	l.run("produce", func(i int) error {
		r := rec(fmt.Sprint("k", i), "v")
		if i%2 == 0 {
			r.Key = nil
		}
		return p.Produce(ctx, "t", r, func(pos strata.Position, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				acked = append(acked, pos)
			}
		})
	})
	l.run("append", func(i int) error {
		if _, err := s.Append(ctx, "t", rec(fmt.Sprint("a", i), "v")); err != nil {
			return err
		}
		appended.Add(1)
		_, err := s.Lag(ctx, "g", "t")
		return err
	})
	l.run("txn", func(i int) error {
		txn, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
		if err == nil {
			err = txn.Append(ctx, "t", rec(fmt.Sprint("x", i), "v"))
		}
		if err == nil {
			err = txn.Commit(ctx)
		}
		return err
	})
	for n := 2; n <= 8; n++ {
		waitProgress(t, &appended, int64(n))
		require.NoError(t, s.CreatePartitions("t", n))
	}
	require.NoError(t, l.wait())
	require.NoError(t, p.Flush(ctx))
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, acked)
	for _, pos := range acked {
		_, err := s.Get("t", pos.Partition, pos.Offset)
		require.NoError(t, err, "%+v", pos)
	}
	d, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 8)
}

// TestCreatePartitionsGroup: a group's consumer is assigned the new
// partitions (the group rebalances on the new count) and reads them.
func TestCreatePartitionsGroup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer c.Close()
	_, err = s.AppendTo(ctx, "t", 0, rec("k", "old"))
	require.NoError(t, err)
	msgs, err := c.Poll(ctx)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Len(t, c.Assignment(), 2)

	require.NoError(t, s.CreatePartitions("t", 4))
	_, err = s.AppendTo(ctx, "t", 3, rec("k", "new"))
	require.NoError(t, err)
	for {
		msgs, err := c.Poll(ctx)
		require.NoError(t, err)
		if len(msgs) > 0 && msgs[0].Partition == 3 {
			require.Equal(t, "new", string(msgs[0].Value))
			break
		}
	}
	require.Len(t, c.Assignment(), 4)
}

// TestAlterTopicConfigCrash crashes an AlterTopicConfig at every file
// operation it makes: the reopened store has the topic with its old
// config or its new one, whole, every record kept, and the change (again)
// works.
func TestAlterTopicConfigCrash(t *testing.T) {
	ctx := context.Background()
	opts := &strata.Options{Sync: strata.SyncAlways, Logger: slog.New(slog.DiscardHandler)}
	setup := func() (*vfs.Mem, *strata.Store, strata.TopicConfig) {
		m := vfs.NewMem()
		s, err := strata.Open("data", onFS(m, opts))
		require.NoError(t, err)
		require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2, SegmentBytes: 64 << 10, MaxIndexBytes: 4 << 10}))
		require.NoError(t, s.CreateTopic("u", strata.TopicConfig{}))
		_, err = s.AppendTo(ctx, "t", 1, rec("k", "v0"), rec("k", "v1"))
		require.NoError(t, err)
		d, err := s.DescribeTopic("t")
		require.NoError(t, err)
		return m, s, d.Config
	}
	change := func(c strata.TopicConfig) strata.TopicConfig {
		c.Retention, c.RetentionBytes, c.MinCompactionLag = time.Hour, 1<<20, time.Minute
		return c
	}
	m, s, old := setup()
	before := condOpCount(m)
	require.NoError(t, s.AlterTopicConfig("t", change(old)))
	total := condOpCount(m) - before
	require.NoError(t, s.Close())
	require.Positive(t, total)

	counts := map[bool]int{}
	crashPoints(t, total, 1, func(k, torn int) {
		at := fmt.Sprintf("k=%d torn=%d", k, torn)
		m, s, old := setup()
		m.SetInjector(vfs.FailAfter(k, condCrashOps...))
		_ = s.AlterTopicConfig("t", change(old))
		after := crashedWay(m, k, torn)
		_ = s.Close()
		s, err := strata.Open("data", onFS(after, opts))
		require.NoError(t, err, at)
		d, err := s.DescribeTopic("t")
		require.NoError(t, err, at)
		changed := d.Config == change(old)
		require.True(t, changed || d.Config == old, "%s: config %+v is neither the old nor the new", at, d.Config)
		counts[changed]++
		require.Equal(t, int64(2), d.Partitions[1].EndOffset, at)
		_, err = s.DescribeTopic("u")
		require.NoError(t, err, "%s: the other topic", at)
		require.NoError(t, s.AlterTopicConfig("t", change(old)), at)
		require.NoError(t, s.Close(), at)
		s, err = strata.Open("data", onFS(after, opts))
		require.NoError(t, err, at)
		d, err = s.DescribeTopic("t")
		require.NoError(t, err, at)
		require.Equal(t, change(old), d.Config, at)
		require.NoError(t, s.Close(), at)
	})
	require.Positive(t, counts[false], "some crashes kept the old config")
	require.Positive(t, counts[true], "some crashes kept the new config")
}
