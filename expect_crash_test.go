package strata_test

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// condCrashOps are the operations the conditional-append crash test fails:
// from the k-th on, every one fails, as if the machine had died there.
var condCrashOps = []vfs.Op{vfs.OpWrite, vfs.OpWriteMap, vfs.OpAllocate, vfs.OpSync, vfs.OpSyncMap, vfs.OpSyncDir, vfs.OpTruncate, vfs.OpCreate, vfs.OpRename, vfs.OpRemove}

// condKeys are the keys the workload appends; condFresh is one it never
// appends, whose first AppendIfLast after a restart must find no record.
var (
	condKeys  = []string{"k0", "k1", "k2", "k3", "k4"}
	condFresh = "fresh"
)

const (
	condTopic    = "t"
	condParts    = 2
	condSteps    = 200
	condInterval = 10 * time.Millisecond // SyncEvery's interval
)

// condAttempt is what the workload did with one batch of records.
type condAttempt struct {
	part   int
	key    string
	values []string
	// state is acked (the append returned its offset), refused (it
	// returned ErrWrongOffset), or uncertain (it failed otherwise: its
	// records may or may not be there, but only once).
	state  string
	offset int64 // of the first record, when acked
}

// condModel is what a partition's records say: the end offset, and each
// key's last offset.
type condModel struct {
	end  [condParts]int64
	last [condParts]map[string]int64
}

func newCondModel() *condModel {
	m := &condModel{}
	for p := range m.last {
		m.last[p] = map[string]int64{}
	}
	return m
}

func (m *condModel) lastOf(part int, key string) int64 {
	if off, ok := m.last[part][key]; ok {
		return off
	}
	return strata.NoOffset
}

func (m *condModel) add(part int, key string, off int64) {
	m.last[part][key] = off
	m.end[part] = off + 1
}

// openCond opens the store in data on fsys, to be closed when the test
// ends if the test does not close it first (a failed check must not leave
// a synctest bubble with the store's goroutines).
func openCond(t *testing.T, fsys vfs.FS, opts *strata.Options, msgAndArgs ...any) *strata.Store {
	t.Helper()
	s, err := strata.Open("data", onFS(fsys, opts))
	require.NoError(t, err, msgAndArgs...)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// condWorkload runs a deterministic sequence of AppendIfLast and
// AppendIfEnd calls over condKeys, half of them with the right expected
// offset (from a model of what was acknowledged) and half with a stale
// one, until an append fails with anything but ErrWrongOffset. Under
// SyncEvery it lets the fake clock pass the sync interval every few steps,
// so the background fsyncs fall between the same appends on every run.
// Until the first failure every call must do what the model says: the
// right offset appends at the model's end, a stale one is refused with the
// actual offset.
func condWorkload(t *testing.T, s *strata.Store, everySync bool) []condAttempt {
	model := newCondModel()
	var out []condAttempt
	for i := range condSteps {
		if everySync && i%7 == 6 {
			time.Sleep(condInterval + time.Millisecond)
		}
		key := condKeys[i%len(condKeys)]
		part, err := s.PartitionFor(condTopic, []byte(key))
		require.NoError(t, err)
		n := 1 + i%2
		a := condAttempt{part: part, key: key}
		recs := make([]strata.Record, n)
		for j := range recs {
			v := fmt.Sprintf("v%d.%d", i, j)
			a.values = append(a.values, v)
			recs[j] = strata.Record{Key: []byte(key), Value: []byte(v)}
		}
		var (
			off          int64
			want         int64 // the Actual of a refusal
			stale, ifEnd bool
		)
		switch i % 4 {
		case 0, 1: // AppendIfLast at the key's last offset
			off, err = s.AppendIfLast(ctx, condTopic, []byte(key), model.lastOf(part, key), recs...)
		case 2: // AppendIfLast at a stale one
			stale, want = true, model.lastOf(part, key)
			expected := want - 1
			if want == strata.NoOffset {
				expected = 0
			}
			off, err = s.AppendIfLast(ctx, condTopic, []byte(key), expected, recs...)
		case 3: // AppendIfEnd at the end offset, or past it
			ifEnd, want = true, model.end[part]
			stale = i%8 == 7
			end := want
			if stale {
				end = want + 1
			}
			off, err = s.AppendIfEnd(ctx, condTopic, part, end, recs...)
		}
		var wrong *strata.WrongOffsetError
		switch {
		case err == nil:
			require.False(t, stale, "step %d: a stale expected offset was accepted", i)
			require.Equal(t, model.end[part], off, "step %d: appended at the end offset", i)
			a.state, a.offset = "acked", off
			model.add(part, key, off+int64(n)-1)
		case errors.As(err, &wrong):
			require.True(t, stale, "step %d: the right expected offset was refused: %v", i, err)
			require.ErrorIs(t, err, strata.ErrWrongOffset)
			require.Equal(t, want, wrong.Actual, "step %d", i)
			if ifEnd {
				require.Nil(t, wrong.Key, "step %d", i)
			} else {
				require.Equal(t, key, string(wrong.Key), "step %d", i)
			}
			a.state = "refused"
		default:
			a.state = "uncertain"
			return append(out, a)
		}
		out = append(out, a)
	}
	return out
}

// TestConditionalAppendsSurviveCrashAtEveryOperation runs a deterministic
// workload of AppendIfLast and AppendIfEnd on the in-memory file system,
// under SyncAlways and SyncEvery (in a synctest bubble, so the background
// fsyncs come between the same appends on every run), and crashes it at
// each write, sync, rename and the rest of the workload's operations in
// turn, keeping what was synced, a torn prefix of the rest, or random
// pages of it. After reopening, each partition holds, in order and at
// rising offsets, appends that were not refused, none twice, each at the
// offset its call returned; under SyncAlways they are a prefix holding
// every acknowledged append. (Under SyncEvery records can be lost before
// later ones that stay: a segment that lost its unsynced tail whole keeps
// the next one, as Kafka's recovery does.) Then the checks work on the
// recovered state: replaying the partitions into a model of each key's
// last offset and each partition's end, AppendIfLast with NoOffset
// succeeds exactly for the keys the model has no record of, a stale last
// offset is refused with the model's as Actual and the model's succeeds,
// and AppendIfEnd likewise.
func TestConditionalAppendsSurviveCrashAtEveryOperation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy strata.SyncPolicy
	}{
		{"SyncAlways", strata.SyncAlways},
		{"SyncEvery", strata.SyncEvery(condInterval)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				condCrashTest(t, tc.policy, tc.name == "SyncEvery")
			})
		})
	}
}

func condCrashTest(t *testing.T, policy strata.SyncPolicy, everySync bool) {
	opts := &strata.Options{Sync: policy, RetentionCheckInterval: -1, CleanerInterval: -1, Logger: slog.New(slog.DiscardHandler)}
	setup := func() *vfs.Mem {
		m := vfs.NewMem()
		s := openCond(t, m, opts)
		require.NoError(t, s.CreateTopic(condTopic, strata.TopicConfig{Partitions: condParts, SegmentBytes: 512}))
		require.NoError(t, s.Close())
		return m.Crash()
	}

	// A run without faults: every call does what the model says, and the
	// partitions roll.
	m := setup()
	s := openCond(t, m, opts)
	before := condOpCount(m)
	attempts := condWorkload(t, s, everySync)
	require.Len(t, attempts, condSteps)
	total := condOpCount(m) - before
	stats := s.Stats().Topics[condTopic]
	require.NoError(t, s.Close())
	require.Len(t, stats, condParts)
	for p, st := range stats {
		require.Greater(t, st.Segments, 2, "partition %d rolls", p)
	}

	t.Logf("%d operations to fail at", total)
	crashPoints(t, total, 5, func(k, torn int) {
		m := setup()
		s := openCond(t, m, opts)
		m.SetInjector(vfs.FailAfter(k, condCrashOps...))
		attempts := condWorkload(t, s, everySync)
		after := crashedWay(m, k, torn)
		_ = s.Close() // the dead store's files answer ErrCrashed; this stops its goroutines
		s2 := openCond(t, after, opts, "k=%d torn=%d", k, torn)
		model := checkCondRecovered(t, s2, attempts, policy == strata.SyncAlways, fmt.Sprintf("k=%d torn=%d", k, torn))
		checkCondAfterRestart(t, s2, model, fmt.Sprintf("k=%d torn=%d", k, torn))
		require.NoError(t, s2.Close())
	})
}

// checkCondRecovered reads every partition of the reopened store and
// checks it against the attempts of the crashed run; it returns the model
// of what the partitions hold.
func checkCondRecovered(t *testing.T, s *strata.Store, attempts []condAttempt, durable bool, at string) *condModel {
	model := newCondModel()
	for p := range condParts {
		// What the partition may hold: the records of the appends to it
		// that were not refused, in the order they were made.
		type want struct {
			key, value string
			offset     int64 // -1 if not acknowledged
		}
		var may []want
		acked := 0
		for _, a := range attempts {
			if a.part != p || a.state == "refused" {
				continue
			}
			for j, v := range a.values {
				w := want{key: a.key, value: v, offset: -1}
				if a.state == "acked" {
					w.offset = a.offset + int64(j)
					acked = len(may) + 1
				}
				may = append(may, w)
			}
		}
		i, read, holes := 0, 0, 0 // i: the next of may that may come
		prev := int64(-1)
		for r, err := range s.Scan(condTopic, p, 0) {
			require.NoError(t, err, "%s partition %d", at, p)
			require.Greater(t, r.Offset, prev, "%s partition %d: offsets rise", at, p)
			prev = r.Offset
			j := i
			for j < len(may) && may[j].value != string(r.Value) {
				j++
			}
			require.Less(t, j, len(may), "%s partition %d offset %d: %q is no append's that was not refused, or is out of order or repeated", at, p, r.Offset, r.Value)
			holes += j - i
			w := may[j]
			i = j + 1
			require.Equal(t, w.key, string(r.Key), "%s partition %d offset %d", at, p, r.Offset)
			if w.offset >= 0 {
				require.Equal(t, w.offset, r.Offset, "%s partition %d: at the offset its append returned", at, p)
			}
			model.add(p, string(r.Key), r.Offset)
			read++
		}
		if durable {
			require.Zero(t, holes, "%s partition %d: records lost before later ones under SyncAlways", at, p)
			require.GreaterOrEqual(t, read, acked, "%s partition %d: acknowledged records lost under SyncAlways", at, p)
		} else if holes > 0 {
			t.Logf("%s partition %d: %d records lost before later ones that stayed", at, p, holes)
		}
		end, err := s.ListOffsets(condTopic, p, strata.Latest)
		require.NoError(t, err)
		// Past the last record; further only by the offsets of records
		// that were not acknowledged and were lost (a crash can keep the
		// segment a roll created after them).
		require.GreaterOrEqual(t, end, model.end[p], "%s partition %d: the end offset is past the last record", at, p)
		require.LessOrEqual(t, end, int64(len(may)), "%s partition %d: no end offset past every append's", at, p)
		model.end[p] = end
	}
	return model
}

// checkCondAfterRestart checks that the conditional appends of the
// reopened store agree with the model of what its partitions hold, and
// keep agreeing as they append.
func checkCondAfterRestart(t *testing.T, s *strata.Store, model *condModel, at string) {
	requireWrong := func(err error, key string, actual int64, what string) {
		t.Helper()
		require.ErrorIs(t, err, strata.ErrWrongOffset, "%s: %s", at, what)
		var wrong *strata.WrongOffsetError
		require.ErrorAs(t, err, &wrong, "%s: %s", at, what)
		require.Equal(t, actual, wrong.Actual, "%s: %s", at, what)
		if key == "" {
			require.Nil(t, wrong.Key, "%s: %s", at, what)
		} else {
			require.Equal(t, key, string(wrong.Key), "%s: %s", at, what)
		}
	}
	for _, key := range append(append([]string{}, condKeys...), condFresh) {
		part, err := s.PartitionFor(condTopic, []byte(key))
		require.NoError(t, err)
		r := strata.Record{Key: []byte(key), Value: []byte("after")}

		// NoOffset: accepted exactly when the model has no record of key.
		last := model.lastOf(part, key)
		off, err := s.AppendIfLast(ctx, condTopic, []byte(key), strata.NoOffset, r)
		if last == strata.NoOffset {
			require.NoError(t, err, "%s: key %s has no record: NoOffset appends", at, key)
			require.Equal(t, model.end[part], off, "%s: key %s", at, key)
			model.add(part, key, off)
		} else {
			requireWrong(err, key, last, fmt.Sprintf("key %s has a record at %d: NoOffset refused", key, last))
		}

		// A stale last offset, and one from the future, are refused with
		// the actual one; the actual one appends.
		last = model.lastOf(part, key)
		for _, stale := range []int64{last - 1, last + 1} {
			_, err = s.AppendIfLast(ctx, condTopic, []byte(key), stale, r)
			requireWrong(err, key, last, fmt.Sprintf("key %s last %d, expected %d", key, last, stale))
		}
		off, err = s.AppendIfLast(ctx, condTopic, []byte(key), last, r)
		require.NoError(t, err, "%s: key %s at its last offset %d", at, key, last)
		require.Equal(t, model.end[part], off, "%s: key %s", at, key)
		model.add(part, key, off)
	}
	for p := range condParts {
		end := model.end[p]
		r := strata.Record{Key: []byte(condKeys[0]), Value: []byte("end")}
		for _, stale := range []int64{end - 1, end + 1} {
			if stale < 0 {
				continue
			}
			_, err := s.AppendIfEnd(ctx, condTopic, p, stale, r)
			requireWrong(err, "", end, fmt.Sprintf("partition %d end %d, expected %d", p, end, stale))
		}
		off, err := s.AppendIfEnd(ctx, condTopic, p, end, r)
		require.NoError(t, err, "%s: partition %d at its end %d", at, p, end)
		require.Equal(t, end, off)
		model.add(p, condKeys[0], off)
	}
	// The append of AppendIfEnd entered its key: AppendIfLast checks
	// against it.
	key := condKeys[0]
	part, err := s.PartitionFor(condTopic, []byte(key))
	require.NoError(t, err)
	last := model.lastOf(part, key)
	_, err = s.AppendIfLast(ctx, condTopic, []byte(key), last-1, strata.Record{Key: []byte(key)})
	requireWrong(err, key, last, "after AppendIfEnd")
	_, err = s.AppendIfLast(ctx, condTopic, []byte(key), last, strata.Record{Key: []byte(key)})
	require.NoError(t, err, "%s: after AppendIfEnd", at)
}

// condRace is what one goroutine of the racing workload did: each call's
// records, key, expected last offset (for AppendIfLast; anyLast for
// AppendIfEnd) and outcome.
type condRace struct {
	attempt condAttempt
	last    int64
}

// anyLast marks a condRace made with AppendIfEnd.
const anyLast = -100

// condRacingWorkload runs goroutines that race on condKeys: each appends
// to a key with AppendIfLast at the last offset it knows (NoOffset at
// first), and on ErrWrongOffset takes the Actual and tries again; every
// fifth call is an AppendIfEnd on the key's partition, likewise. Each
// stops at its first other error. It returns every call made.
func condRacingWorkload(t *testing.T, s *strata.Store) []condRace {
	const goroutines, calls = 4, 60
	var (
		mu  sync.Mutex
		out []condRace
		wg  sync.WaitGroup
	)
	for g := range goroutines {
		wg.Go(func() {
			lasts := map[string]int64{}
			var ends [condParts]int64
			for i := range calls {
				key := condKeys[(g+i)%len(condKeys)]
				part, err := s.PartitionFor(condTopic, []byte(key))
				if err != nil {
					t.Error(err)
					return
				}
				v := fmt.Sprintf("g%d.%d", g, i)
				r := condRace{attempt: condAttempt{part: part, key: key, values: []string{v}}, last: anyLast}
				rec := strata.Record{Key: []byte(key), Value: []byte(v)}
				var off int64
				if i%5 == 4 {
					off, err = s.AppendIfEnd(ctx, condTopic, part, ends[part], rec)
				} else {
					r.last = cmpOr(lasts, key)
					off, err = s.AppendIfLast(ctx, condTopic, []byte(key), r.last, rec)
				}
				var wrong *strata.WrongOffsetError
				switch {
				case err == nil:
					r.attempt.state, r.attempt.offset = "acked", off
					lasts[key], ends[part] = off, off+1
				case errors.As(err, &wrong):
					r.attempt.state = "refused"
					if r.last == anyLast {
						ends[part] = wrong.Actual
					} else {
						lasts[key] = wrong.Actual
					}
				default:
					r.attempt.state = "uncertain"
				}
				mu.Lock()
				out = append(out, r)
				mu.Unlock()
				if r.attempt.state == "uncertain" {
					return
				}
			}
		})
	}
	wg.Wait()
	return out
}

// TestConditionalAppendsRacingSurviveCrash races goroutines on a few keys
// with AppendIfLast and AppendIfEnd under SyncAlways (their fsyncs group
// committed) and crashes the in-memory file system at each of the
// operations its run without faults made (a racing run makes about as
// many, in another order). After reopening, every acknowledged append is
// there once, at its offset; nothing refused is there; offsets rise; and
// no update was lost: the record before each acknowledged AppendIfLast's
// record with its key is at the last offset that call expected (none, for
// NoOffset). The conditional checks then agree with a model of the
// recovered partitions, as in the sequential test.
func TestConditionalAppendsRacingSurviveCrash(t *testing.T) {
	opts := &strata.Options{Sync: strata.SyncAlways, RetentionCheckInterval: -1, CleanerInterval: -1, Logger: slog.New(slog.DiscardHandler)}
	setup := func() *vfs.Mem {
		m := vfs.NewMem()
		s := openCond(t, m, opts)
		require.NoError(t, s.CreateTopic(condTopic, strata.TopicConfig{Partitions: condParts, SegmentBytes: 512}))
		require.NoError(t, s.Close())
		return m.Crash()
	}
	m := setup()
	s := openCond(t, m, opts)
	races := condRacingWorkload(t, s)
	total := condOpCount(m)
	require.NoError(t, s.Close())
	won := 0
	for _, r := range races {
		require.NotEqual(t, "uncertain", r.attempt.state)
		if r.attempt.state == "acked" {
			won++
		}
	}
	require.Positive(t, won)
	require.Less(t, won, len(races), "the goroutines race: some calls are refused")
	t.Logf("%d calls, %d appended, %d operations", len(races), won, total)

	step := 1
	if testing.Short() {
		step = 7
	}
	for k := 0; k <= total; k += step {
		torn := k % 3
		at := fmt.Sprintf("k=%d torn=%d", k, torn)
		m := setup()
		s := openCond(t, m, opts)
		m.SetInjector(vfs.FailAfter(k, condCrashOps...))
		races := condRacingWorkload(t, s)
		after := crashedWay(m, k, torn)
		_ = s.Close()
		s2 := openCond(t, after, opts, at)
		model := checkRacesRecovered(t, s2, races, at)
		checkCondAfterRestart(t, s2, model, at)
		require.NoError(t, s2.Close())
	}
}

// checkRacesRecovered checks the reopened store's partitions against the
// calls of the racing workload and returns the model of what they hold.
func checkRacesRecovered(t *testing.T, s *strata.Store, races []condRace, at string) *condModel {
	byValue := map[string]condRace{}
	var appended [condParts]int64 // records given offsets, at most
	for _, r := range races {
		byValue[r.attempt.values[0]] = r
		if r.attempt.state != "refused" {
			appended[r.attempt.part]++
		}
	}
	model := newCondModel()
	seen := map[string]bool{}
	for p := range condParts {
		prev := int64(-1)
		lastOf := map[string]int64{}
		for r, err := range s.Scan(condTopic, p, 0) {
			require.NoError(t, err, "%s partition %d", at, p)
			require.Greater(t, r.Offset, prev, "%s partition %d: offsets rise", at, p)
			prev = r.Offset
			v := string(r.Value)
			race, ok := byValue[v]
			require.True(t, ok, "%s partition %d offset %d: %q is no call's", at, p, r.Offset, v)
			require.False(t, seen[v], "%s: %q twice", at, v)
			seen[v] = true
			require.NotEqual(t, "refused", race.attempt.state, "%s: refused %q is there", at, v)
			require.Equal(t, p, race.attempt.part, at)
			require.Equal(t, race.attempt.key, string(r.Key), at)
			if race.attempt.state == "acked" {
				require.Equal(t, race.attempt.offset, r.Offset, "%s: %q at the offset its call returned", at, v)
				if race.last != anyLast {
					require.Equal(t, race.last, cmpOr(lastOf, race.attempt.key), "%s: %q was appended after the key's record at the offset it expected, and no other", at, v)
				}
			}
			lastOf[race.attempt.key] = r.Offset
			model.add(p, race.attempt.key, r.Offset)
		}
		end, err := s.ListOffsets(condTopic, p, strata.Latest)
		require.NoError(t, err)
		require.GreaterOrEqual(t, end, model.end[p], "%s partition %d: the end offset is past the last record", at, p)
		require.LessOrEqual(t, end, appended[p], "%s partition %d: no end offset past every append's", at, p)
		model.end[p] = end
	}
	for _, r := range races {
		if r.attempt.state == "acked" {
			require.True(t, seen[r.attempt.values[0]], "%s: acknowledged %q lost under SyncAlways", at, r.attempt.values[0])
		}
	}
	return model
}
