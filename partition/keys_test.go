package partition

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// kr is a record of key k with value v.
func kr(k, v string) log.Record { return log.Record{Key: []byte(k), Value: []byte(v)} }

// lastByScan returns the offset of each key's last record, read from the
// partition's start.
func lastByScan(t testing.TB, p *Partition) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for _, r := range readRange(t, p, p.StartOffset()) {
		m[string(r.Key)] = r.Offset
	}
	return m
}

// lastOf returns what the key index says is key's last offset, building
// it if needed.
func lastOf(t testing.TB, p *Partition, key string) int64 {
	t.Helper()
	require.NoError(t, p.buildKeys())
	p.mu.Lock()
	defer p.mu.Unlock()
	off, err := p.lastOffsetMuLocked([]byte(key))
	require.NoError(t, err)
	return off
}

// requireIndexMatchesScan checks the key index against a scan for every
// key in keys.
func requireIndexMatchesScan(t testing.TB, p *Partition, keys []string) {
	t.Helper()
	scan := lastByScan(t, p)
	for _, k := range keys {
		want, ok := scan[k]
		if !ok {
			want = NoOffset
		}
		require.Equal(t, want, lastOf(t, p, k), "key %s", k)
	}
}

// TestAppendIfLast appends to a partition holding a@0, b@1, a@2 with each
// kind of expected last offset: the right one appends; a wrong one is a
// *WrongOffsetError with the key and its actual last offset; bad input is
// refused first; and none but the right one changes the log.
func TestAppendIfLast(t *testing.T) {
	for _, tc := range []struct {
		name    string
		key     []byte
		last    int64
		records []log.Record
		want    error
		actual  int64
	}{
		{name: "last of a", key: []byte("a"), last: 2, records: []log.Record{kr("a", "x"), kr("a", "y")}},
		{name: "last of b", key: []byte("b"), last: 1, records: []log.Record{kr("b", "x")}},
		{name: "new key", key: []byte("z"), last: NoOffset, records: []log.Record{kr("z", "x")}},
		{name: "empty key is a key", key: []byte{}, last: NoOffset, records: []log.Record{kr("", "x")}},
		{name: "an earlier record of a", key: []byte("a"), last: 0, records: []log.Record{kr("a", "x")}, want: ErrWrongOffset, actual: 2},
		{name: "a expected new", key: []byte("a"), last: NoOffset, records: []log.Record{kr("a", "x")}, want: ErrWrongOffset, actual: 2},
		{name: "the end offset", key: []byte("a"), last: 3, records: []log.Record{kr("a", "x")}, want: ErrWrongOffset, actual: 2},
		{name: "new key expected at b", key: []byte("z"), last: 1, records: []log.Record{kr("z", "x")}, want: ErrWrongOffset, actual: NoOffset},
		{name: "nil key", key: nil, last: NoOffset, records: []log.Record{{Value: []byte("x")}}, want: ErrNoKey},
		{name: "below NoOffset", key: []byte("a"), last: -2, records: []log.Record{kr("a", "x")}, want: ErrOutOfRange},
		{name: "another key", key: []byte("a"), last: 2, records: []log.Record{kr("a", "x"), kr("b", "y")}, want: ErrWrongKey},
		{name: "record without key", key: []byte("a"), last: 2, records: []log.Record{{Value: []byte("x")}}, want: ErrWrongKey},
		{name: "no records, wrong last", key: []byte("a"), last: 0, want: ErrEmptyBatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := memPartition(t, small(newClock()))
			defer p.Close()
			for _, r := range []log.Record{kr("a", "0"), kr("b", "1"), kr("a", "2")} {
				_, err := p.Append([]log.Record{r})
				require.NoError(t, err)
			}
			off, err := p.AppendIfLast(tc.records, tc.key, tc.last)
			if tc.want == nil {
				require.NoError(t, err)
				require.Equal(t, int64(3), off)
				require.Equal(t, int64(3+len(tc.records)), p.EndOffset())
				require.Equal(t, int64(3+len(tc.records)-1), lastOf(t, p, string(tc.key)))
				return
			}
			require.ErrorIs(t, err, tc.want)
			var wrong *WrongOffsetError
			if tc.want == ErrWrongOffset {
				require.ErrorAs(t, err, &wrong)
				require.Equal(t, WrongOffsetError{Key: tc.key, Expected: tc.last, Actual: tc.actual}, *wrong)
			} else {
				require.False(t, errors.As(err, &wrong), "%v", err)
			}
			require.Equal(t, int64(3), p.EndOffset())
		})
	}
}

// TestAppendIfLastClosed: a closed partition is ErrClosed, before the
// index is built and after.
func TestAppendIfLastClosed(t *testing.T) {
	for _, built := range []bool{false, true} {
		p, _ := memPartition(t, small(newClock()))
		_, err := p.Append([]log.Record{kr("a", "0")})
		require.NoError(t, err)
		if built {
			require.NoError(t, p.buildKeys())
		}
		require.NoError(t, p.Close())
		_, err = p.AppendIfLast([]log.Record{kr("a", "1")}, []byte("a"), 0)
		require.ErrorIs(t, err, ErrClosed)
	}
}

// TestKeyIndexFollowsEveryAppend: once built, the index learns the keys of
// every kind of append (Append, AppendIfEnd, AppendEncoded, a raw batch,
// compressed too), and a reopened partition rebuilds it from the log.
func TestKeyIndexFollowsEveryAppend(t *testing.T) {
	cfg := small(newClock())
	p, m := memPartition(t, cfg)
	_, err := p.Append([]log.Record{kr("a", "0"), kr("b", "1")})
	require.NoError(t, err)
	require.Equal(t, int64(0), lastOf(t, p, "a"))

	_, err = p.Append([]log.Record{kr("a", "2")})
	require.NoError(t, err)
	_, err = p.AppendIfEnd([]log.Record{kr("b", "3")}, 3)
	require.NoError(t, err)
	eb, err := p.Encode(nil, []log.Record{kr("c", "4"), kr("a", "5")})
	require.NoError(t, err)
	_, err = p.AppendEncoded(eb)
	require.NoError(t, err)
	raw, err := log.EncodeBatch(nil, []log.Record{kr("b", "6"), {Key: []byte("c")}}, log.BatchOptions{Compression: log.Zstd})
	require.NoError(t, err)
	_, err = p.AppendRawBatch(raw)
	require.NoError(t, err)
	_, err = p.AppendIfLast([]log.Record{kr("d", "8")}, []byte("d"), NoOffset)
	require.NoError(t, err)
	want := map[string]int64{"a": 5, "b": 6, "c": 7, "d": 8, "e": NoOffset}
	for k, off := range want {
		require.Equal(t, off, lastOf(t, p, k), "key %s", k)
	}
	require.NoError(t, p.Close())

	p, err = Open(m, "topic-0", cfg, false)
	require.NoError(t, err)
	defer p.Close()
	for k, off := range want {
		require.Equal(t, off, lastOf(t, p, k), "key %s after reopening", k)
	}
	_, err = p.AppendIfLast([]log.Record{kr("c", "9")}, []byte("c"), 7)
	require.NoError(t, err)
}

// TestKeyIndexBuildDuringAppends: the records appended while a build
// reads the partition are in the index it makes, and win over what it
// read; a truncation, or a start offset moved past the build's reader,
// makes it read again.
func TestKeyIndexBuildDuringAppends(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	for i := range 50 {
		_, err := p.Append([]log.Record{kr(fmt.Sprint("k", i), "x")})
		require.NoError(t, err)
	}
	builds := 0
	p.keysBuildHook = func() {
		builds++
		switch builds {
		case 1:
			_, err := p.Append([]log.Record{kr("k3", "during"), kr("new", "during")})
			require.NoError(t, err)
			require.NoError(t, p.Truncate(40))
		case 2:
			_, err := p.Append([]log.Record{kr("k7", "during"), kr("late", "during")})
			require.NoError(t, err)
			// Past the reader's next batch: it is out of range there.
			require.NoError(t, p.DeleteRecords(2))
		}
	}
	_, err := p.AppendIfLast([]log.Record{kr("k2", "y")}, []byte("k2"), 2)
	require.NoError(t, err)
	require.Equal(t, 3, builds)
	p.keysBuildHook = nil
	require.Equal(t, int64(40), lastOf(t, p, "k7"))
	require.Equal(t, int64(41), lastOf(t, p, "late"))
	require.Equal(t, int64(42), lastOf(t, p, "k2"))
	require.Equal(t, NoOffset, lastOf(t, p, "k1"))
	require.Equal(t, NoOffset, lastOf(t, p, "new"))
	require.Equal(t, NoOffset, lastOf(t, p, "k45"))
	require.Equal(t, int64(3), lastOf(t, p, "k3"))
	require.Equal(t, NoOffset, lastOf(t, p, "k0"))
	requireIndexMatchesScan(t, p, []string{"k0", "k1", "k2", "k3", "k7", "k39", "k40", "new", "late"})
}

// TestKeyIndexRetentionAndTruncate: a key whose records DeleteRecords
// removed has none; after Truncate a key's last record is the one before
// the cut.
func TestKeyIndexRetentionAndTruncate(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	for _, r := range []log.Record{kr("a", "0"), kr("b", "1"), kr("a", "2"), kr("b", "3"), kr("c", "4")} {
		_, err := p.Append([]log.Record{r})
		require.NoError(t, err)
	}
	require.Equal(t, int64(2), lastOf(t, p, "a"))
	require.NoError(t, p.DeleteRecords(3))
	requireIndexMatchesScan(t, p, []string{"a", "b", "c"})
	require.Equal(t, NoOffset, lastOf(t, p, "a"))
	_, err := p.AppendIfLast([]log.Record{kr("a", "5")}, []byte("a"), 2)
	require.ErrorIs(t, err, ErrWrongOffset)
	_, err = p.AppendIfLast([]log.Record{kr("a", "5")}, []byte("a"), NoOffset)
	require.NoError(t, err)

	require.NoError(t, p.Truncate(4))
	requireIndexMatchesScan(t, p, []string{"a", "b", "c"})
	require.Equal(t, NoOffset, lastOf(t, p, "a"))
	require.Equal(t, int64(3), lastOf(t, p, "b"))
	_, err = p.AppendIfLast([]log.Record{kr("b", "6")}, []byte("b"), 3)
	require.NoError(t, err)
}

// TestKeyIndexCompaction: across compactions that remove superseded
// records and, once their horizon passed, tombstones, the index says what
// a scan of the partition says, for every key.
func TestKeyIndexCompaction(t *testing.T) {
	p, _, clock := compactedPartition(t)
	defer p.Close()
	r := rand.New(rand.NewPCG(3, 3))
	keys := make([]string, 12)
	for i := range keys {
		keys[i] = fmt.Sprint("key-", i)
	}
	writeKVs(t, p, r, 300)
	requireIndexMatchesScan(t, p, keys)
	// The last records of key-0 and key-1: tombstones.
	for _, k := range keys[:2] {
		_, err := p.Append([]log.Record{{Key: []byte(k)}})
		require.NoError(t, err)
	}
	require.Positive(t, lastOf(t, p, keys[0]))
	removed := false
	for round := range 5 {
		for i := range 150 {
			_, err := p.Append([]log.Record{kr(keys[2+i%10], fmt.Sprint(r.Uint32()))})
			require.NoError(t, err)
		}
		clock.Add(time.Duration(round) * 40 * time.Minute)
		before := len(lastByScan(t, p))
		_, err := p.Compact(clock.Now(), eager)
		require.NoError(t, err)
		removed = removed || len(lastByScan(t, p)) < before
		requireIndexMatchesScan(t, p, keys)
	}
	require.True(t, removed, "some key lost its last record, a tombstone, to compaction")
	require.Equal(t, NoOffset, lastOf(t, p, keys[0]))
	_, err := p.AppendIfLast([]log.Record{kr(keys[0], "back")}, []byte(keys[0]), NoOffset)
	require.NoError(t, err)
}

// TestAppendIfLastRace starts, round after round, several appenders of one
// key at once with the same expected last offset, while another goroutine
// appends records of other keys: exactly one wins each round, the others
// are told its offset, and the key's records are the winners', in order.
// The first round builds the index while appends go on.
func TestAppendIfLastRace(t *testing.T) {
	const appenders = 8
	rounds := 2000
	if raceEnabled || testing.Short() {
		rounds = 600
	}
	for _, tc := range conditionalSyncPolicies {
		t.Run(tc.name, func(t *testing.T) {
			cfg := small(newClock())
			cfg.Sync = tc.sync
			p, _ := memPartition(t, cfg)
			defer p.Close()
			for i := range 200 {
				_, err := p.Append([]log.Record{kr(fmt.Sprint("other-", i%7), "x")})
				require.NoError(t, err)
			}
			stop := make(chan struct{})
			var others sync.WaitGroup
			others.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := p.Append([]log.Record{kr(fmt.Sprint("other-", i%7), "x")}); err != nil {
						t.Error(err)
						return
					}
				}
			})
			key := []byte("hot")
			last := NoOffset
			var winners []string
			for r := range rounds {
				wins, errs := race(appenders, func(a int) (int64, error) {
					return p.AppendIfLast([]log.Record{kr("hot", fmt.Sprint(r, "/", a))}, key, last)
				})
				require.Len(t, wins, 1, "round %d: winners", r)
				won := wins[0].off
				winners = append(winners, fmt.Sprint(r, "/", wins[0].a))
				require.Len(t, errs, appenders-1, "round %d", r)
				for _, err := range errs {
					var wrong *WrongOffsetError
					require.ErrorAs(t, err, &wrong, "round %d", r)
					require.Equal(t, WrongOffsetError{Key: key, Expected: last, Actual: won}, *wrong, "round %d", r)
				}
				last = won
			}
			close(stop)
			others.Wait()
			var got []string
			for _, rec := range readRange(t, p, 0) {
				if string(rec.Key) == "hot" {
					got = append(got, string(rec.Value))
				}
			}
			require.Equal(t, winners, got)
			keys := []string{"hot"}
			for i := range 7 {
				keys = append(keys, fmt.Sprint("other-", i))
			}
			requireIndexMatchesScan(t, p, keys)
		})
	}
}
