package strata_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/stratatest"
	"github.com/stratalog/strata/topic"
)

// producerStore opens a test store with one topic "t" of cfg.
func producerStore(t *testing.T, cfg strata.TopicConfig) *strata.Store {
	t.Helper()
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", cfg))
	return s
}

// newProducer returns a producer on s that the test closes at its end.
func newProducer(t *testing.T, s *strata.Store, opts strata.ProducerOptions) *strata.Producer {
	t.Helper()
	p := s.Producer(opts)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	return p
}

// appendsOf returns the append calls and the records they appended, per
// partition of topic "t".
func appendsOf(s *strata.Store) (appends, records []int64) {
	for _, ps := range s.Stats().Topics["t"] {
		appends = append(appends, ps.Appends)
		records = append(records, ps.AppendedRecords)
	}
	return appends, records
}

func totalAppends(s *strata.Store) (n int64) {
	appends, _ := appendsOf(s)
	for _, a := range appends {
		n += a
	}
	return n
}

// outcomes collects what callbacks report, in the order they run.
type outcomes struct {
	mu   sync.Mutex
	pos  []strata.Position
	errs []error
	ids  []int
}

func (o *outcomes) callback(id int) func(strata.Position, error) {
	return func(pos strata.Position, err error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.pos = append(o.pos, pos)
		o.errs = append(o.errs, err)
		o.ids = append(o.ids, id)
	}
}

func (o *outcomes) len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.pos)
}

// kv returns a record with a key and a value.
func kv(key, value string) strata.Record {
	return strata.Record{Key: []byte(key), Value: []byte(value)}
}

// value100 returns a record without a key and with a 100-byte value.
func value100(i int) strata.Record {
	v := make([]byte, 100)
	copy(v, fmt.Sprintf("value-%d", i))
	return strata.Record{Value: v}
}

func TestProducerLinger(t *testing.T) {
	for _, tc := range []struct {
		name   string
		linger time.Duration
		want   time.Duration // when the batch is appended
	}{
		{"default", 0, 5 * time.Millisecond},
		{"10ms", 10 * time.Millisecond, 10 * time.Millisecond},
		{"none", -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := producerStore(t, strata.TopicConfig{})
				p := newProducer(t, s, strata.ProducerOptions{Linger: tc.linger})
				var o outcomes
				start := time.Now()
				for i := range 3 {
					require.NoError(t, p.Produce(t.Context(), "t", value100(i), o.callback(i)))
				}
				if tc.want > 0 {
					synctest.Wait()
					require.Zero(t, totalAppends(s), "nothing is appended before the linger time")
					time.Sleep(tc.want - time.Nanosecond)
					synctest.Wait()
					require.Zero(t, totalAppends(s), "nothing is appended before the linger time")
					time.Sleep(time.Nanosecond)
				}
				synctest.Wait()
				require.Equal(t, tc.want, time.Since(start))
				if tc.want > 0 {
					require.EqualValues(t, 1, totalAppends(s), "the lingered records go as one batch")
				}
				require.Equal(t, []strata.Position{{0, 0}, {0, 1}, {0, 2}}, o.pos)
				require.Equal(t, []error{nil, nil, nil}, o.errs)
			})
		})
	}
}

// batchSize is the encoded size of a batch of n records like value100's.
func batchSize(t *testing.T, n int) int {
	recs := make([]log.Record, n)
	for i := range recs {
		recs[i] = value100(i)
	}
	b, err := log.EncodeBatch(nil, recs, log.BatchOptions{})
	require.NoError(t, err)
	return len(b)
}

func TestProducerBatchBytes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		batchBytes func(t *testing.T) int
		produce    int
		appended   []int64 // records per append, in order
	}{
		{"full batch goes at once", func(t *testing.T) int { return batchSize(t, 8) }, 8, []int64{8}},
		{"batch under the size waits", func(t *testing.T) int { return batchSize(t, 8) + 1 }, 8, nil},
		{"record that does not fit sends the batch", func(t *testing.T) int { return batchSize(t, 8) + 1 }, 9, []int64{8}},
		{"several batches", func(t *testing.T) int { return batchSize(t, 4) }, 13, []int64{4, 4, 4}},
		{"record larger than a batch goes alone", func(t *testing.T) int { return 100 }, 3, []int64{1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := producerStore(t, strata.TopicConfig{})
				p := newProducer(t, s, strata.ProducerOptions{Linger: time.Hour, BatchBytes: tc.batchBytes(t)})
				var o outcomes
				start := time.Now()
				for i := range tc.produce {
					require.NoError(t, p.Produce(t.Context(), "t", value100(i), o.callback(i)))
				}
				synctest.Wait()
				require.Zero(t, time.Since(start), "a full batch does not linger")
				var sum int64
				for _, n := range tc.appended {
					sum += n
				}
				require.EqualValues(t, len(tc.appended), totalAppends(s))
				_, records := appendsOf(s)
				require.Equal(t, sum, records[0])
				require.Equal(t, int(sum), o.len(), "callbacks ran for the appended records")
				for i := range o.pos {
					require.Equal(t, strata.Position{Partition: 0, Offset: int64(i)}, o.pos[i])
					require.Equal(t, i, o.ids[i])
				}
			})
		})
	}
}

func TestProducerOneBatchPerPartition(t *testing.T) {
	const parts, n = 4, 100
	s := producerStore(t, strata.TopicConfig{Partitions: parts})
	p := newProducer(t, s, strata.ProducerOptions{Linger: time.Hour})
	var o outcomes
	want := make([]int64, parts)
	for i := range n {
		key := []byte(fmt.Sprintf("key-%d", i))
		want[topic.KeyPartition(key, parts)]++
		require.NoError(t, p.Produce(t.Context(), "t", strata.Record{Key: key, Value: []byte("v")}, o.callback(i)))
	}
	require.NoError(t, p.Flush(t.Context()))
	appends, records := appendsOf(s)
	require.Equal(t, want, records)
	for part, a := range appends {
		require.EqualValues(t, 1, a, "partition %d: one batch", part)
	}
	require.Equal(t, n, o.len())
	for i, pos := range o.pos {
		key := []byte(fmt.Sprintf("key-%d", o.ids[i]))
		require.Equal(t, topic.KeyPartition(key, parts), pos.Partition, "routed as Append routes")
	}
}

func TestProducerOrder(t *testing.T) {
	const parts, keys, n = 3, 10, 1000
	s := producerStore(t, strata.TopicConfig{Partitions: parts})
	p := newProducer(t, s, strata.ProducerOptions{Linger: -1, BatchBytes: 300})
	var o outcomes
	for i := range n {
		r := strata.Record{Key: []byte(fmt.Sprintf("k%d", i%keys)), Value: []byte(fmt.Sprint(i))}
		require.NoError(t, p.Produce(t.Context(), "t", r, o.callback(i)))
	}
	require.NoError(t, p.Flush(t.Context()))
	require.Equal(t, n, o.len())
	require.Greater(t, totalAppends(s), int64(parts), "many batches")

	// Per partition, callbacks run in produce order with dense offsets.
	next := make([]int64, parts)
	lastID := []int{-1, -1, -1}
	at := map[strata.Position]int{}
	for i, pos := range o.pos {
		require.NoError(t, o.errs[i])
		require.Equal(t, next[pos.Partition], pos.Offset)
		require.Greater(t, o.ids[i], lastID[pos.Partition])
		next[pos.Partition]++
		lastID[pos.Partition] = o.ids[i]
		at[pos] = o.ids[i]
	}
	// The log holds each key's records in order, where the callbacks said.
	lastOfKey := map[string]int{}
	for part := range parts {
		recs, err := s.Read(t.Context(), "t", part, 0, n)
		require.NoError(t, err)
		require.Len(t, recs, int(next[part]))
		for _, r := range recs {
			var id int
			_, err := fmt.Sscan(string(r.Value), &id)
			require.NoError(t, err)
			require.Equal(t, at[strata.Position{Partition: part, Offset: r.Offset}], id)
			last, seen := lastOfKey[string(r.Key)]
			require.True(t, !seen || id > last, "key %s in order", r.Key)
			lastOfKey[string(r.Key)] = id
		}
	}
}

func TestProducerFlushAndClose(t *testing.T) {
	s := producerStore(t, strata.TopicConfig{Partitions: 2})
	p := s.Producer(strata.ProducerOptions{Linger: time.Hour})
	var o outcomes
	for i := range 10 {
		require.NoError(t, p.Produce(t.Context(), "t", kv(fmt.Sprint(i), "v"), o.callback(i)))
	}
	require.NoError(t, p.Flush(t.Context()))
	require.Equal(t, 10, o.len(), "Flush waits for the callbacks")
	_, records := appendsOf(s)
	require.EqualValues(t, 10, records[0]+records[1])
	require.NoError(t, p.Flush(t.Context()), "nothing to flush")

	for i := 10; i < 15; i++ {
		require.NoError(t, p.Produce(t.Context(), "t", kv(fmt.Sprint(i), "v"), o.callback(i)))
	}
	require.NoError(t, p.Close())
	require.Equal(t, 15, o.len(), "Close flushes")
	_, records = appendsOf(s)
	require.EqualValues(t, 15, records[0]+records[1])

	err := p.Produce(t.Context(), "t", kv("late", "v"), o.callback(-1))
	require.ErrorIs(t, err, strata.ErrClosed)
	require.NoError(t, p.Flush(t.Context()))
	require.NoError(t, p.Close(), "closing twice")
	require.Equal(t, 15, o.len(), "no callback for a record Produce refused")
}

func TestProducerConcurrent(t *testing.T) {
	const goroutines, each, parts = 8, 250, 4
	s := producerStore(t, strata.TopicConfig{Partitions: parts})
	p := newProducer(t, s, strata.ProducerOptions{Linger: time.Millisecond, BatchBytes: 2000})
	var failed atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				r := strata.Record{Key: []byte(fmt.Sprintf("g%d", g)), Value: []byte(fmt.Sprint(i))}
				err := p.Produce(t.Context(), "t", r, func(_ strata.Position, err error) {
					if err != nil {
						failed.Add(1)
					}
				})
				if err != nil {
					failed.Add(1)
				}
				if i == each/2 {
					if err := p.Flush(t.Context()); err != nil {
						failed.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, p.Flush(t.Context()))
	require.Zero(t, failed.Load())

	seen := map[string]int{}
	for part := range parts {
		recs, err := s.Read(t.Context(), "t", part, 0, goroutines*each)
		require.NoError(t, err)
		for _, r := range recs {
			var i int
			_, err := fmt.Sscan(string(r.Value), &i)
			require.NoError(t, err)
			require.Equal(t, seen[string(r.Key)], i, "each goroutine's records in order, none lost")
			seen[string(r.Key)]++
		}
	}
	require.Len(t, seen, goroutines)
	for key, n := range seen {
		require.Equal(t, each, n, key)
	}
}

func TestProducerBackPressure(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts strata.ProducerOptions
	}{
		{"records", strata.ProducerOptions{Linger: time.Hour, MaxBufferedRecords: 2}},
		// Each record is 107 bytes in a batch: two fit, a third does not.
		{"bytes", strata.ProducerOptions{Linger: time.Hour, MaxBufferedBytes: 250}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := producerStore(t, strata.TopicConfig{})
				p := newProducer(t, s, tc.opts)
				ctx := t.Context()

				// Hold the producer's goroutine in a callback, with nothing
				// buffered.
				release := make(chan struct{})
				require.NoError(t, p.Produce(ctx, "t", value100(0), func(strata.Position, error) { <-release }))
				flushed := make(chan error, 1)
				go func() { flushed <- p.Flush(ctx) }()
				synctest.Wait()
				require.EqualValues(t, 1, totalAppends(s))

				var o outcomes
				require.NoError(t, p.Produce(ctx, "t", value100(1), o.callback(1)))
				require.NoError(t, p.Produce(ctx, "t", value100(2), o.callback(2)))

				// The buffer is full: Produce waits, honouring ctx.
				short, cancel := context.WithTimeout(ctx, time.Second)
				defer cancel()
				start := time.Now()
				err := p.Produce(short, "t", value100(3), o.callback(3))
				require.ErrorIs(t, err, context.DeadlineExceeded)
				require.Equal(t, time.Second, time.Since(start))

				produced := make(chan error, 1)
				go func() { produced <- p.Produce(ctx, "t", value100(4), o.callback(4)) }()
				synctest.Wait()
				require.Empty(t, produced, "Produce waits for room")

				close(release)
				synctest.Wait()
				require.NoError(t, <-flushed)
				require.NoError(t, <-produced, "appending made room")
				require.NoError(t, p.Flush(ctx))
				require.Equal(t, []int{1, 2, 4}, o.ids, "no callback for the record that timed out")
				_, records := appendsOf(s)
				require.EqualValues(t, 4, records[0])
			})
		})
	}
}

func TestProducerCloseWakesWaitingProduce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := producerStore(t, strata.TopicConfig{})
		p := s.Producer(strata.ProducerOptions{MaxBufferedRecords: 1})
		ctx := t.Context()
		release := make(chan struct{})
		require.NoError(t, p.Produce(ctx, "t", value100(0), func(strata.Position, error) { <-release }))
		synctest.Wait() // the record lingers, then its callback holds the producer
		require.NoError(t, p.Produce(ctx, "t", value100(1), nil))
		produced := make(chan error, 1)
		go func() { produced <- p.Produce(ctx, "t", value100(2), nil) }()
		synctest.Wait()
		closed := make(chan error, 1)
		go func() { closed <- p.Close() }()
		synctest.Wait()
		require.ErrorIs(t, <-produced, strata.ErrClosed)
		require.Empty(t, closed, "Close waits for the callback")
		close(release)
		require.NoError(t, <-closed)
		_, records := appendsOf(s)
		require.EqualValues(t, 2, records[0])
	})
}

// valueForBatch returns a record whose batch alone is exactly size bytes.
func valueForBatch(t *testing.T, size int) strata.Record {
	for n := size - 100; n < size; n++ {
		r := strata.Record{Key: []byte("k"), Value: make([]byte, n), Headers: []strata.Header{{Key: "h", Value: []byte("x")}}}
		b, err := log.EncodeBatch(nil, []log.Record{r}, log.BatchOptions{})
		require.NoError(t, err)
		if len(b) == size {
			return r
		}
	}
	t.Fatalf("no record makes a batch of %d bytes", size)
	return strata.Record{}
}

func TestProducerBadRecords(t *testing.T) {
	const maxBatch = 1024
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		topic string
		rec   func(t *testing.T) strata.Record
		err   error // nil: accepted, and the callback reports success
	}{
		{"unknown topic", nil, "nope", func(*testing.T) strata.Record { return kv("k", "v") }, strata.ErrUnknownTopic},
		{"batch at the limit", nil, "t", func(t *testing.T) strata.Record { return valueForBatch(t, maxBatch) }, nil},
		{"batch over the limit", nil, "t", func(t *testing.T) strata.Record { return valueForBatch(t, maxBatch+1) }, strata.ErrBatchTooLarge},
		{"timestamp too far ahead", nil, "t", func(*testing.T) strata.Record {
			return strata.Record{Value: []byte("v"), Timestamp: time.Now().Add(2 * time.Hour)}
		}, strata.ErrTimestampTooFarAhead},
		{"ended context", canceled, "t", func(*testing.T) strata.Record { return kv("k", "v") }, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := producerStore(t, strata.TopicConfig{MaxBatchBytes: maxBatch})
			p := newProducer(t, s, strata.ProducerOptions{})
			ctx := tc.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			var o outcomes
			r := tc.rec(t)
			err := p.Produce(ctx, tc.topic, r, o.callback(0))
			require.NoError(t, p.Flush(t.Context()))
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				require.Zero(t, o.len(), "no callback when Produce fails")
				require.Zero(t, totalAppends(s))
				return
			}
			require.NoError(t, err)
			require.Equal(t, []error{nil}, o.errs)
			_, err = s.AppendTo(t.Context(), "t", 0, r)
			require.NoError(t, err, "Append takes the record too")
		})
	}
}

func TestProducerAppendErrors(t *testing.T) {
	s := producerStore(t, strata.TopicConfig{})
	p := newProducer(t, s, strata.ProducerOptions{Linger: time.Hour})
	var o outcomes
	require.NoError(t, p.Produce(t.Context(), "t", kv("a", "1"), o.callback(0)))
	require.NoError(t, p.Produce(t.Context(), "t", kv("b", "2"), nil))
	require.NoError(t, s.DeleteTopic("t"))
	err := p.Flush(t.Context())
	require.ErrorIs(t, err, strata.ErrUnknownTopic, "Flush reports the error of a record without a callback")
	require.Len(t, o.errs, 1)
	require.ErrorIs(t, o.errs[0], strata.ErrUnknownTopic)
	require.Equal(t, int64(-1), o.pos[0].Offset)
	require.NoError(t, p.Flush(t.Context()), "an error is reported once")

	// A topic created again under the same name takes new records.
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	require.NoError(t, p.Produce(t.Context(), "t", kv("a", "3"), o.callback(1)))
	require.NoError(t, p.Flush(t.Context()))
	require.NoError(t, o.errs[1])
}

// TestProducerTopicCreatedAgain deletes a topic while a batch for it is
// open and creates it again: the old batch fails with ErrUnknownTopic and
// never lands in the new topic, which holds only what was produced to it.
func TestProducerTopicCreatedAgain(t *testing.T) {
	s := producerStore(t, strata.TopicConfig{})
	p := newProducer(t, s, strata.ProducerOptions{Linger: time.Hour})
	var o outcomes
	require.NoError(t, p.Produce(t.Context(), "t", kv("old", "1"), o.callback(0)))
	require.NoError(t, s.DeleteTopic("t"))
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	require.NoError(t, p.Produce(t.Context(), "t", kv("new", "2"), o.callback(1)))
	require.NoError(t, p.Flush(t.Context()))
	require.Equal(t, 2, o.len())
	for i, id := range o.ids {
		if id == 0 {
			require.ErrorIs(t, o.errs[i], strata.ErrUnknownTopic)
		} else {
			require.NoError(t, o.errs[i])
		}
	}
	recs, err := s.Read(t.Context(), "t", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, "new", string(recs[0].Key))
}

func TestProducerStoreClosed(t *testing.T) {
	s, err := strata.Open(t.TempDir(), &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	p := s.Producer(strata.ProducerOptions{Linger: time.Hour})
	var o outcomes
	require.NoError(t, p.Produce(t.Context(), "t", kv("a", "1"), o.callback(0)))
	require.NoError(t, s.Close())
	require.ErrorIs(t, p.Produce(t.Context(), "t", kv("a", "2"), o.callback(1)), strata.ErrClosed)
	require.NoError(t, p.Close())
	require.Len(t, o.errs, 1)
	require.ErrorIs(t, o.errs[0], strata.ErrClosed, "a batch appended after the store closed fails")
}

func TestProducerCopiesRecords(t *testing.T) {
	s := producerStore(t, strata.TopicConfig{})
	p := newProducer(t, s, strata.ProducerOptions{Linger: time.Hour})
	buf := []byte("key|value|header")
	r := strata.Record{Key: buf[0:3], Value: buf[4:9], Headers: []strata.Header{{Key: "h", Value: buf[10:16]}, {Key: "nil"}}}
	require.NoError(t, p.Produce(t.Context(), "t", r, nil))
	copy(buf, "XXXXXXXXXXXXXXXX")
	r.Headers[0].Key = "changed"
	require.NoError(t, p.Produce(t.Context(), "t", strata.Record{Key: []byte{}, Value: nil}, nil))
	require.NoError(t, p.Flush(t.Context()))

	recs, err := s.Read(t.Context(), "t", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Equal(t, "key", string(recs[0].Key))
	require.Equal(t, "value", string(recs[0].Value))
	require.Equal(t, []strata.Header{{Key: "h", Value: []byte("header")}, {Key: "nil"}}, recs[0].Headers)
	require.NotNil(t, recs[1].Key, "an empty key stays a key")
	require.Empty(t, recs[1].Key)
	require.Nil(t, recs[1].Value, "a tombstone stays one")
}

func TestProducerStampsTimestamps(t *testing.T) {
	start := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(start.UnixNano())
	s := stratatest.Open(t, &strata.Options{Now: func() time.Time { return time.Unix(0, clock.Load()).UTC() }})
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	p := newProducer(t, s, strata.ProducerOptions{Linger: time.Hour})
	given := start.Add(-time.Hour)
	require.NoError(t, p.Produce(t.Context(), "t", strata.Record{Value: []byte("now")}, nil))
	require.NoError(t, p.Produce(t.Context(), "t", strata.Record{Value: []byte("given"), Timestamp: given}, nil))
	clock.Add(int64(time.Minute)) // the append happens later
	require.NoError(t, p.Flush(t.Context()))
	recs, err := s.Read(t.Context(), "t", 0, 0, 10)
	require.NoError(t, err)
	require.Equal(t, start, recs[0].Timestamp, "stamped at Produce")
	require.Equal(t, given, recs[1].Timestamp)
}

func TestProducerKeylessSticky(t *testing.T) {
	const parts = 8
	t.Run("moves when a batch is sent", func(t *testing.T) {
		s := producerStore(t, strata.TopicConfig{Partitions: parts})
		p := newProducer(t, s, strata.ProducerOptions{Linger: time.Hour})
		var prev = -1
		for round := range 5 {
			var o outcomes
			for i := range 10 {
				require.NoError(t, p.Produce(t.Context(), "t", strata.Record{Value: []byte("v")}, o.callback(i)))
			}
			require.NoError(t, p.Flush(t.Context()))
			part := o.pos[0].Partition
			for _, pos := range o.pos {
				require.Equal(t, part, pos.Partition, "round %d: one partition per batch", round)
			}
			require.NotEqual(t, prev, part, "round %d: the next batch goes elsewhere", round)
			prev = part
		}
		appends, records := appendsOf(s)
		var a, n int64
		for i := range appends {
			a += appends[i]
			n += records[i]
		}
		require.EqualValues(t, 5, a)
		require.EqualValues(t, 50, n)
	})
	t.Run("moves when a batch fills", func(t *testing.T) {
		s := producerStore(t, strata.TopicConfig{Partitions: parts})
		p := newProducer(t, s, strata.ProducerOptions{Linger: time.Hour, BatchBytes: batchSize(t, 5)})
		var o outcomes
		ts := time.Now() // one timestamp: the batch sizes do not depend on the clock
		for i := range 50 {
			r := value100(i)
			r.Timestamp = ts
			require.NoError(t, p.Produce(t.Context(), "t", r, o.callback(i)))
		}
		require.NoError(t, p.Flush(t.Context()))
		require.Equal(t, 50, o.len())
		for b := range 10 {
			batch := o.pos[5*b : 5*b+5]
			for _, pos := range batch {
				require.Equal(t, batch[0].Partition, pos.Partition, "batch %d in one partition", b)
			}
			if b > 0 {
				require.NotEqual(t, o.pos[5*b-1].Partition, batch[0].Partition, "batch %d moved on", b)
			}
		}
		require.EqualValues(t, 10, totalAppends(s))
	})
}

// TestProducerBatchesFit produces records of random sizes, keys, headers and
// timestamps into a topic with small batches: the producer's sizing must
// keep every batch within MaxBatchBytes, so that no append fails.
func TestProducerBatchesFit(t *testing.T) {
	const maxBatch, n = 1024, 2000
	s := producerStore(t, strata.TopicConfig{Partitions: 3, MaxBatchBytes: maxBatch})
	p := newProducer(t, s, strata.ProducerOptions{Linger: time.Hour}) // batches fill up
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	var failed atomic.Int64
	accepted := 0
	for range n {
		r := strata.Record{Value: make([]byte, rng.IntN(400))}
		if rng.IntN(2) == 0 {
			r.Key = make([]byte, rng.IntN(20))
		}
		for range rng.IntN(3) {
			r.Headers = append(r.Headers, strata.Header{Key: "header", Value: make([]byte, rng.IntN(50))})
		}
		if rng.IntN(2) == 0 {
			r.Timestamp = now.Add(-time.Duration(rng.Int64N(int64(1000 * time.Hour))))
		}
		err := p.Produce(t.Context(), "t", r, func(_ strata.Position, err error) {
			if err != nil {
				failed.Add(1)
			}
		})
		require.NoError(t, err)
		accepted++
	}
	require.NoError(t, p.Flush(t.Context()))
	require.Zero(t, failed.Load())
	_, records := appendsOf(s)
	require.EqualValues(t, accepted, records[0]+records[1]+records[2])
	var bytes int64
	for _, ps := range s.Stats().Topics["t"] {
		bytes += ps.AppendedBytes
	}
	require.Greater(t, float64(bytes)/float64(totalAppends(s)), 0.75*maxBatch, "batches are filled close to the limit")
}

// TestProducerEncodesAheadUnderBackPressure: goroutines producing
// compressed records faster than the sender appends them encode batches
// for it while they wait for room; every record still lands once, in the
// order of its key, at the offset its callback was given.
func TestProducerEncodesAheadUnderBackPressure(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 3}))
	p := s.Producer(strata.ProducerOptions{Compression: strata.CompressionLZ4, BatchBytes: 2048, MaxBufferedRecords: 300})
	const producers, each = 4, 3000
	type sent struct {
		key, value string
		pos        strata.Position
	}
	var mu sync.Mutex
	var got []sent
	var wg sync.WaitGroup
	for g := range producers {
		wg.Go(func() {
			for i := range each {
				key, value := fmt.Sprintf("g%d-k%d", g, i%7), fmt.Sprintf(`{"g":%d,"i":%d,"pad":"%032d"}`, g, i, i)
				err := p.Produce(ctx, "t", strata.Record{Key: []byte(key), Value: []byte(value)}, func(pos strata.Position, err error) {
					assert.NoError(t, err)
					mu.Lock()
					got = append(got, sent{key, value, pos})
					mu.Unlock()
				})
				if !assert.NoError(t, err) {
					return
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, p.Close())
	require.Positive(t, p.EncodedAhead(), "waiting producers encoded batches")
	require.Len(t, got, producers*each)

	byOffset := map[strata.Position]sent{}
	for _, g := range got {
		_, dup := byOffset[g.pos]
		require.False(t, dup, "offset %v given twice", g.pos)
		byOffset[g.pos] = g
	}
	last := map[string]int{} // key → last i read
	n := 0
	for part := range 3 {
		recs, err := s.Read(ctx, "t", part, 0, producers*each)
		require.NoError(t, err)
		for _, r := range recs {
			want, ok := byOffset[strata.Position{Partition: part, Offset: r.Offset}]
			require.True(t, ok, "a record no callback was told of at %d/%d", part, r.Offset)
			require.Equal(t, want.key, string(r.Key))
			require.Equal(t, want.value, string(r.Value))
			var g, i int
			_, err := fmt.Sscanf(string(r.Value), `{"g":%d,"i":%d`, &g, &i)
			require.NoError(t, err)
			if prev, ok := last[want.key]; ok {
				require.Greater(t, i, prev, "key %s out of order", want.key)
			}
			last[want.key] = i
			n++
		}
	}
	require.Equal(t, producers*each, n)
}

// TestProducerAppendTimeRisesWithOffsets: on a LogAppendTime topic, where
// a batch is stamped when it is encoded, producers waiting for room leave
// the encoding to the sender, so that append times rise with offsets.
func TestProducerAppendTimeRisesWithOffsets(t *testing.T) {
	// A clock that moves a millisecond at every reading: each batch's
	// append time differs from every other's.
	var ms atomic.Int64
	ms.Store(time.Now().UnixMilli())
	s := stratatest.Open(t, &strata.Options{Now: func() time.Time { return time.UnixMilli(ms.Add(1)) }})
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{TimestampType: log.LogAppendTime}))
	p := s.Producer(strata.ProducerOptions{Compression: strata.CompressionLZ4, BatchBytes: 2048, MaxBufferedRecords: 200})
	const producers, each = 4, 3000
	var wg sync.WaitGroup
	for g := range producers {
		wg.Go(func() {
			for i := range each {
				err := p.Produce(ctx, "t", strata.Record{Value: fmt.Appendf(nil, `{"g":%d,"i":%d,"pad":"%032d"}`, g, i, i)}, nil)
				if !assert.NoError(t, err) {
					return
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, p.Close())
	recs, err := s.Read(ctx, "t", 0, 0, producers*each)
	require.NoError(t, err)
	require.Len(t, recs, producers*each)
	for i := 1; i < len(recs); i++ {
		require.False(t, recs[i].Timestamp.Before(recs[i-1].Timestamp),
			"offset %d is stamped %v, before offset %d's %v", recs[i].Offset, recs[i].Timestamp, recs[i-1].Offset, recs[i-1].Timestamp)
	}
}
