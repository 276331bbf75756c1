package strata_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// TestAppendIfEndRefuses calls AppendIfEnd on a partition that ends at 2
// with each thing that refuses it: a wrong end is ErrWrongOffset and a
// *WrongOffsetError with the actual end; bad input is its own sentinel,
// also with a wrong end; and none of them writes anything.
func TestAppendIfEndRefuses(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2, MaxBatchBytes: 1024}))
	_, err := s.AppendTo(ctx, "t", 0, rec("k", "a"), rec("k", "b"))
	require.NoError(t, err)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	big := strata.Record{Value: make([]byte, 2048)}
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		topic string
		part  int
		end   int64
		recs  []strata.Record
		want  error
	}{
		{"behind", ctx, "t", 0, 1, []strata.Record{rec("k", "c")}, strata.ErrWrongOffset},
		{"ahead", ctx, "t", 0, 3, []strata.Record{rec("k", "c")}, strata.ErrWrongOffset},
		{"other partition's end", ctx, "t", 1, 2, []strata.Record{rec("k", "c")}, strata.ErrWrongOffset},
		{"negative end", ctx, "t", 0, -1, []strata.Record{rec("k", "c")}, strata.ErrOffsetOutOfRange},
		{"no records", ctx, "t", 0, 1, nil, strata.ErrNoRecords},
		{"too large", ctx, "t", 0, 1, []strata.Record{big}, strata.ErrBatchTooLarge},
		{"unknown partition", ctx, "t", 2, 2, []strata.Record{rec("k", "c")}, strata.ErrUnknownPartition},
		{"negative partition", ctx, "t", -1, 2, []strata.Record{rec("k", "c")}, strata.ErrUnknownPartition},
		{"unknown topic", ctx, "nope", 0, 2, []strata.Record{rec("k", "c")}, strata.ErrUnknownTopic},
		{"reserved topic", ctx, "__consumer_offsets", 0, 0, []strata.Record{rec("k", "c")}, strata.ErrReservedTopic},
		{"canceled", canceled, "t", 0, 2, []strata.Record{rec("k", "c")}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.AppendIfEnd(tc.ctx, tc.topic, tc.part, tc.end, tc.recs...)
			require.ErrorIs(t, err, tc.want)
			var wrong *strata.WrongOffsetError
			require.Equal(t, tc.want == strata.ErrWrongOffset, errors.As(err, &wrong), "%v", err)
			if wrong != nil {
				require.Equal(t, tc.end, wrong.Expected)
				require.Contains(t, err.Error(), "strata: append to t-")
				actual, err := s.ListOffsets("t", tc.part, strata.Latest)
				require.NoError(t, err)
				require.Equal(t, actual, wrong.Actual)
			}
			for part, end := range []int64{2, 0} {
				got, err := s.ListOffsets("t", part, strata.Latest)
				require.NoError(t, err)
				require.Equal(t, end, got, "partition %d", part)
			}
		})
	}
}

// TestAppendIfEndMessage: the error says the partition, the end found and
// the one expected, in the store's words.
func TestAppendIfEndMessage(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{}))
	_, err := s.AppendIfEnd(ctx, "orders", 0, 5, rec("k", "v"))
	require.EqualError(t, err, "strata: append to orders-0: end offset is 0, not the expected 5")
	_, err = s.AppendIfEnd(ctx, "orders", 0, -2, rec("k", "v"))
	require.EqualError(t, err, "strata: append to orders-0: expected end offset -2 is negative: offset out of range")
}

// TestAppendIfEndNoLostUpdate runs the read-modify-write that optimistic
// concurrency exists for: goroutines each add 1 to a counter many times,
// each time reading the last value and appending the next one only if
// nothing was appended since, retrying otherwise. No increment is lost:
// the log holds 1, 2, ... up to the number of increments, each once.
func TestAppendIfEndNoLostUpdate(t *testing.T) {
	const (
		writers = 6
		adds    = 300
	)
	for _, tc := range []struct {
		name string
		sync strata.SyncPolicy
	}{
		{"sync=never", strata.SyncNever},
		{"sync=always", strata.SyncAlways},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := stratatest.Open(t, &strata.Options{Sync: tc.sync})
			require.NoError(t, s.CreateTopic("counter", strata.TopicConfig{}))
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for range writers {
				wg.Go(func() {
					for range adds {
						if err := addOne(s); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			recs, err := s.Read(ctx, "counter", 0, 0, writers*adds+1)
			require.NoError(t, err)
			require.Len(t, recs, writers*adds)
			for i, r := range recs {
				require.Equal(t, strconv.Itoa(i+1), string(r.Value), "offset %d", i)
			}
		})
	}
}

// addOne reads the counter's last value and appends the next, retrying
// while another writer got there first.
func addOne(s *strata.Store) error {
	for {
		end, err := s.ListOffsets("counter", 0, strata.Latest)
		if err != nil {
			return err
		}
		n := 0
		if end > 0 {
			last, err := s.Get("counter", 0, end-1)
			if err != nil {
				return err
			}
			if n, err = strconv.Atoi(string(last.Value)); err != nil {
				return err
			}
		}
		_, err = s.AppendIfEnd(ctx, "counter", 0, end, strata.Record{Value: []byte(strconv.Itoa(n + 1))})
		if !errors.Is(err, strata.ErrWrongOffset) {
			return err
		}
	}
}
