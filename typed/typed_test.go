package typed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
	"github.com/stratalog/strata/typed"
)

func TestTypedEndToEnd(t *testing.T) {
	const parts = 3
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: parts}))
	p := newProducer(t, s, strata.ProducerOptions{Linger: time.Hour})
	tp := typed.NewProducer(p, typed.String(), typed.JSON[codecOrder]())

	type sent struct {
		pos strata.Position
		err error
		rec typed.Record[string, codecOrder]
	}
	var all []sent // appended by callbacks, which run one at a time
	produce := func(r typed.Record[string, codecOrder]) {
		require.NoError(t, tp.ProduceRecord(t.Context(), "orders", r, func(pos strata.Position, err error) {
			all = append(all, sent{pos, err, r})
		}))
	}
	ts := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	for i := range 30 {
		customer := fmt.Sprintf("customer-%d", i%5)
		produce(typed.Record[string, codecOrder]{
			Timestamp: ts.Add(time.Duration(i) * time.Second),
			Key:       customer,
			Value:     codecOrder{ID: i, Item: "tea", Price: float64(i) / 2},
			Headers:   []strata.Header{{Key: "seq", Value: []byte(fmt.Sprint(i))}},
		})
	}
	require.NoError(t, tp.Produce(t.Context(), "orders", "customer-0", codecOrder{ID: 30}, nil))
	require.NoError(t, p.Flush(t.Context()))
	require.Len(t, all, 30)

	got := map[strata.Position]typed.Record[string, codecOrder]{}
	for part := range parts {
		r := typed.NewReader(s, "orders", part, 0, typed.String(), typed.JSON[codecOrder]())
		end, err := s.ListOffsets("orders", part, strata.Latest)
		require.NoError(t, err)
		for r.Offset() < end {
			rec, err := r.Next(t.Context())
			require.NoError(t, err)
			got[strata.Position{Partition: part, Offset: rec.Offset}] = rec
		}
	}
	require.Len(t, got, 31)
	for _, want := range all {
		require.NoError(t, want.err)
		rec := got[want.pos]
		want.rec.Offset = want.pos.Offset
		require.Equal(t, want.rec, rec)
	}
}

func TestTypedReaderAll(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	_, err := s.Append(t.Context(), "events",
		strata.Record{Value: []byte(`{"id":1}`)},
		strata.Record{Value: []byte(`{"id":`)}, // cut short
		strata.Record{Value: []byte(`{"id":3}`)},
	)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r := typed.NewReader(s, "events", 0, 0, typed.Bytes(), typed.JSON[codecOrder]())
	var ids []int
	var errs []error
	for rec, err := range r.All(ctx) {
		errs = append(errs, err)
		if err == nil {
			ids = append(ids, rec.Value.ID)
		}
		if len(errs) == 3 {
			cancel() // the iterator tails the partition: stop it
		}
	}
	require.Equal(t, []int{1, 3}, ids)
	require.Len(t, errs, 4)
	require.ErrorIs(t, errs[1], typed.ErrDecode, "a bad record is yielded and the iteration goes on")
	require.ErrorIs(t, errs[3], context.Canceled, "the last error ends the iteration")
	require.EqualValues(t, 3, r.Offset())
}

func TestTypedTombstoneAndKeyless(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	p := newProducer(t, s, strata.ProducerOptions{})
	tp := typed.NewProducer(p, typed.Bytes(), typed.JSON[*codecOrder]())
	require.NoError(t, tp.Produce(t.Context(), "t", nil, &codecOrder{ID: 1}, nil))
	require.NoError(t, tp.Produce(t.Context(), "t", []byte("k"), nil, nil))
	require.NoError(t, p.Flush(t.Context()))

	raw, err := s.Read(t.Context(), "t", 0, 0, 10)
	require.NoError(t, err)
	require.Nil(t, raw[0].Key, "a nil key is no key")
	require.Nil(t, raw[1].Value, "a nil value is a tombstone")

	r := typed.NewReader(s, "t", 0, 0, typed.Bytes(), typed.JSON[*codecOrder]())
	rec, err := r.Next(t.Context())
	require.NoError(t, err)
	require.Nil(t, rec.Key)
	require.Equal(t, &codecOrder{ID: 1}, rec.Value)
	rec, err = r.Next(t.Context())
	require.NoError(t, err)
	require.Equal(t, []byte("k"), rec.Key)
	require.Nil(t, rec.Value)
}

func TestTypedDecodeError(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bad   strata.Record
		field string
	}{
		{"value", strata.Record{Key: []byte(`"k"`), Value: []byte("{not json")}, "value"},
		{"key", strata.Record{Key: []byte("not json"), Value: []byte(`{"id":2}`)}, "key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := stratatest.Open(t, nil)
			require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 2}))
			good := func(id int) strata.Record {
				return strata.Record{Key: []byte(`"k"`), Value: []byte(fmt.Sprintf(`{"id":%d}`, id))}
			}
			_, err := s.AppendTo(t.Context(), "events", 1, good(1), tc.bad, good(3))
			require.NoError(t, err)

			r := typed.NewReader(s, "events", 1, 0, typed.JSON[string](), typed.JSON[codecOrder]())
			rec, err := r.Next(t.Context())
			require.NoError(t, err)
			require.Equal(t, 1, rec.Value.ID)

			_, err = r.Next(t.Context())
			require.ErrorIs(t, err, typed.ErrDecode)
			var syntax *json.SyntaxError
			require.ErrorAs(t, err, &syntax, "the codec's error is wrapped")
			require.ErrorContains(t, err, "the "+tc.field+" of events partition 1 offset 1")
			require.Equal(t, 1, strings.Count(err.Error(), "typed: "), "one prefix: %s", err)

			rec, err = r.Next(t.Context())
			require.NoError(t, err, "the reader moves past a bad record")
			require.Equal(t, int64(2), rec.Offset)
			require.Equal(t, 3, rec.Value.ID)

			r.SetOffset(1)
			_, err = r.Next(t.Context())
			require.ErrorIs(t, err, typed.ErrDecode, "SetOffset goes back to it")
		})
	}
}

func TestTypedEncodeError(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	p := newProducer(t, s, strata.ProducerOptions{})
	called := false
	cb := func(strata.Position, error) { called = true }
	for _, tc := range []struct {
		name string
		tp   func() error
	}{
		{"key", func() error {
			return typed.NewProducer(p, typed.JSON[any](), typed.String()).Produce(t.Context(), "t", make(chan int), "v", cb)
		}},
		{"value", func() error {
			return typed.NewProducer(p, typed.String(), typed.JSON[any]()).Produce(t.Context(), "t", "k", func() {}, cb)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.tp()
			require.ErrorIs(t, err, typed.ErrEncode)
			var unsupported *json.UnsupportedTypeError
			require.ErrorAs(t, err, &unsupported)
			require.ErrorContains(t, err, "the "+tc.name+" of a record for t")
			require.Equal(t, 1, strings.Count(err.Error(), "typed: "), "one prefix: %s", err)
		})
	}
	require.NoError(t, p.Flush(t.Context()))
	require.False(t, called)
	require.Zero(t, totalAppends(s))
}

func TestTypedReaderWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := stratatest.Open(t, nil)
		require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
		r := typed.NewReader(s, "t", 0, 0, typed.String(), typed.String())
		type result struct {
			rec typed.Record[string, string]
			err error
		}
		got := make(chan result, 1)
		go func() {
			rec, err := r.Next(t.Context())
			got <- result{rec, err}
		}()
		synctest.Wait()
		require.Empty(t, got, "Next waits at the end of the partition")
		time.Sleep(2 * time.Minute) // longer than one fetch waits
		require.Empty(t, got)
		_, err := s.Append(t.Context(), "t", kv("k", "v"))
		require.NoError(t, err)
		res := <-got
		require.NoError(t, res.err)
		require.Equal(t, "v", res.rec.Value)

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err = r.Next(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

func TestTypedReaderErrors(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	for _, tc := range []struct {
		name   string
		topic  string
		part   int
		offset int64
		err    error
	}{
		{"unknown topic", "nope", 0, 0, strata.ErrUnknownTopic},
		{"unknown partition", "t", 1, 0, strata.ErrUnknownPartition},
		{"offset out of range", "t", 0, 5, strata.ErrOffsetOutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := typed.NewReader(s, tc.topic, tc.part, tc.offset, typed.String(), typed.String())
			_, err := r.Next(t.Context())
			require.ErrorIs(t, err, tc.err)
		})
	}
}

func newProducer(t *testing.T, s *strata.Store, opts strata.ProducerOptions) *strata.Producer {
	t.Helper()
	p := s.Producer(opts)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	return p
}

func kv(key, value string) strata.Record {
	return strata.Record{Key: []byte(key), Value: []byte(value)}
}

// totalAppends returns the append calls to every partition of topic "t".
func totalAppends(s *strata.Store) (n int64) {
	for _, ps := range s.Stats().Topics["t"] {
		n += ps.Appends
	}
	return n
}
