package strata_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
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

// TestAppendIfLastRefuses calls AppendIfLast with each thing that refuses
// it, on a topic where key "a" is at offset 1 of its partition: a wrong
// last offset is ErrWrongOffset with the key's actual one; bad input is its
// own sentinel whatever the offsets; nothing is written.
func TestAppendIfLastRefuses(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{MaxBatchBytes: 1024}))
	_, err := s.AppendTo(ctx, "t", 0, rec("b", "0"), rec("a", "1"))
	require.NoError(t, err)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	big := strata.Record{Key: []byte("a"), Value: make([]byte, 2048)}
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		topic  string
		key    []byte
		last   int64
		recs   []strata.Record
		want   error
		actual int64
	}{
		{"behind", ctx, "t", []byte("a"), 0, []strata.Record{rec("a", "c")}, strata.ErrWrongOffset, 1},
		{"expected new", ctx, "t", []byte("a"), strata.NoOffset, []strata.Record{rec("a", "c")}, strata.ErrWrongOffset, 1},
		{"the end offset", ctx, "t", []byte("a"), 2, []strata.Record{rec("a", "c")}, strata.ErrWrongOffset, 1},
		{"new key expected at 0", ctx, "t", []byte("z"), 0, []strata.Record{rec("z", "c")}, strata.ErrWrongOffset, strata.NoOffset},
		{"nil key", ctx, "t", nil, 1, []strata.Record{rec("a", "c")}, strata.ErrNoKey, 0},
		{"another key", ctx, "t", []byte("a"), 1, []strata.Record{rec("b", "c")}, strata.ErrWrongKey, 0},
		{"below NoOffset", ctx, "t", []byte("a"), -2, []strata.Record{rec("a", "c")}, strata.ErrOffsetOutOfRange, 0},
		{"no records", ctx, "t", []byte("a"), 0, nil, strata.ErrNoRecords, 0},
		{"too large", ctx, "t", []byte("a"), 0, []strata.Record{big}, strata.ErrBatchTooLarge, 0},
		{"unknown topic", ctx, "nope", []byte("a"), 1, []strata.Record{rec("a", "c")}, strata.ErrUnknownTopic, 0},
		{"reserved topic", ctx, "__consumer_offsets", []byte("a"), 1, []strata.Record{rec("a", "c")}, strata.ErrReservedTopic, 0},
		{"canceled", canceled, "t", []byte("a"), 1, []strata.Record{rec("a", "c")}, context.Canceled, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.AppendIfLast(tc.ctx, tc.topic, tc.key, tc.last, tc.recs...)
			require.ErrorIs(t, err, tc.want)
			var wrong *strata.WrongOffsetError
			require.Equal(t, tc.want == strata.ErrWrongOffset, errors.As(err, &wrong), "%v", err)
			if wrong != nil {
				require.Equal(t, strata.WrongOffsetError{Key: tc.key, Expected: tc.last, Actual: tc.actual}, *wrong)
			}
			end, err := s.ListOffsets("t", 0, strata.Latest)
			require.NoError(t, err)
			require.Equal(t, int64(2), end)
		})
	}
	_, err = s.AppendIfLast(ctx, "t", []byte("a"), 0, rec("a", "v"))
	require.EqualError(t, err, `strata: append to t-0: last offset of key "a" is 1, not the expected 0`)
}

// TestAppendIfLastWithdrawals runs the race that overdraws an account
// without a check: goroutines each load an account of 100, see enough for
// a withdrawal of 70 and append it, expecting the account's last event;
// exactly one withdrawal goes through per account, the others reload and
// are refused for want of money. Other accounts share the partition.
func TestAppendIfLastWithdrawals(t *testing.T) {
	const withdrawers = 6
	accounts := 400
	if testing.Short() {
		accounts = 100
	}
	for _, tc := range []struct {
		name string
		sync strata.SyncPolicy
	}{
		{"sync=never", strata.SyncNever},
		{"sync=always", strata.SyncAlways},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := stratatest.Open(t, &strata.Options{Sync: tc.sync})
			require.NoError(t, s.CreateTopic("accounts", strata.TopicConfig{Partitions: 2}))
			for a := range accounts {
				key := []byte(fmt.Sprint("acct-", a))
				_, err := s.AppendIfLast(ctx, "accounts", key, strata.NoOffset, strata.Record{Key: key, Value: []byte("100")})
				require.NoError(t, err)
				var wg sync.WaitGroup
				var done atomic.Int32
				for range withdrawers {
					wg.Go(func() {
						ok, err := withdraw(s, key, 70)
						if err != nil {
							t.Error(err)
						}
						if ok {
							done.Add(1)
						}
					})
				}
				wg.Wait()
				require.Equal(t, int32(1), done.Load(), "account %d: withdrawals", a)
				balance, _, err := loadAccount(s, key)
				require.NoError(t, err)
				require.Equal(t, 30, balance, "account %d", a)
			}
		})
	}
}

// loadAccount sums the values of key's records in its partition and
// returns the offset of the last one (NoOffset if none).
func loadAccount(s *strata.Store, key []byte) (balance int, last int64, err error) {
	part, err := s.PartitionFor("accounts", key)
	if err != nil {
		return 0, 0, err
	}
	last = strata.NoOffset
	for r, err := range s.Scan("accounts", part, 0) {
		if err != nil {
			return 0, 0, err
		}
		if string(r.Key) != string(key) {
			continue
		}
		n, err := strconv.Atoi(string(r.Value))
		if err != nil {
			return 0, 0, err
		}
		balance += n
		last = r.Offset
	}
	return balance, last, nil
}

// withdraw takes amount from the account if it has enough, reloading and
// deciding again whenever another writer appended to it first.
func withdraw(s *strata.Store, key []byte, amount int) (bool, error) {
	for {
		balance, last, err := loadAccount(s, key)
		if err != nil || balance < amount {
			return false, err
		}
		_, err = s.AppendIfLast(ctx, "accounts", key, last, strata.Record{Key: key, Value: []byte(strconv.Itoa(-amount))})
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, strata.ErrWrongOffset) {
			return false, err
		}
	}
}

// TestAppendIfLastAfterReopen: the last offset of each key is known after
// the store is closed and opened again (the partition is read on the first
// AppendIfLast), the stale one refused.
func TestAppendIfLastAfterReopen(t *testing.T) {
	s := stratatest.OpenOnDisk(t, nil)
	dir := s.Dir()
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{SegmentBytes: 1 << 10}))
	lasts := map[string]int64{}
	for i := range 300 {
		k := fmt.Sprint("k", i%17)
		off, err := s.AppendIfLast(ctx, "t", []byte(k), cmpOr(lasts, k), rec(k, fmt.Sprint(i)))
		require.NoError(t, err)
		lasts[k] = off
	}
	require.NoError(t, s.Close())

	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	defer s.Close()
	for k, last := range lasts {
		_, err := s.AppendIfLast(ctx, "t", []byte(k), last-1, rec(k, "stale"))
		require.ErrorIs(t, err, strata.ErrWrongOffset, "key %s", k)
		_, err = s.AppendIfLast(ctx, "t", []byte(k), last, rec(k, "next"))
		require.NoError(t, err, "key %s", k)
	}
}

// cmpOr returns m[k], or NoOffset if k is not in m.
func cmpOr(m map[string]int64, k string) int64 {
	if v, ok := m[k]; ok {
		return v
	}
	return strata.NoOffset
}
