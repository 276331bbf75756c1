package group

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// txnEntry is one append to a txnLog: commits (plain, or transactional of
// producer pid), or producer pid's marker.
type txnEntry struct {
	commits []Commit
	txn     bool
	pid     int64
	marker  bool
	commit  bool
}

// txnLog is an in-memory TxnOffsetLog that keeps every append in order,
// and can be made to fail.
type txnLog struct {
	mu      sync.Mutex
	entries []txnEntry
	fail    error
}

func (l *txnLog) add(e txnEntry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return l.fail
	}
	e.commits = slices.Clone(e.commits)
	l.entries = append(l.entries, e)
	return nil
}

// Append implements OffsetLog.
func (l *txnLog) Append(commits []Commit) error { return l.add(txnEntry{commits: commits}) }

// AppendTxn implements TxnOffsetLog.
func (l *txnLog) AppendTxn(pid int64, _ int16, commits []Commit) error {
	return l.add(txnEntry{commits: commits, txn: true, pid: pid})
}

// AppendMarker implements TxnOffsetLog.
func (l *txnLog) AppendMarker(pid int64, _ int16, commit bool) (int64, error) {
	l.mu.Lock()
	offset := int64(len(l.entries))
	l.mu.Unlock()
	return offset, l.add(txnEntry{marker: true, pid: pid, commit: commit})
}

// replay replays the log into a new Coordinator, as a store does at open.
func (l *txnLog) replay() *Coordinator {
	c := NewCoordinator(nil, nil)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.entries {
		switch {
		case e.marker:
			c.CompleteTxn(e.pid, e.commit)
		case e.txn:
			c.ReplayTxn(e.pid, e.commits...)
		default:
			c.Replay(e.commits...)
		}
	}
	return c
}

// newTxnFixture returns a Coordinator over topic t of 4 partitions that
// writes to a txnLog.
func newTxnFixture() (*Coordinator, *txnLog, *fakeClock) {
	l, clock := &txnLog{}, newClock()
	return NewCoordinator(l, &Options{Now: clock.Now, Partitions: func(string) int { return 4 }}), l, clock
}

// offsetOf returns group g's committed offset of t-p, -1 for none.
func offsetOf(c *Coordinator, g string, p int) int64 {
	om, ok := c.Committed(g, "t", p)
	if !ok {
		return -1
	}
	return om.Offset
}

// one is an offsets map of one partition of topic t.
func one(p int, off int64) map[TopicPartition]OffsetAndMetadata {
	return map[TopicPartition]OffsetAndMetadata{tp("t", p): om(off)}
}

func TestCommitTxnPendingUntilEnd(t *testing.T) {
	for _, commit := range []bool{true, false} {
		t.Run(fmt.Sprint("commit=", commit), func(t *testing.T) {
			c, l, _ := newTxnFixture()
			require.NoError(t, c.Commit("g", MemberRef{}, one(0, 5)))
			require.NoError(t, c.CommitTxn("g", MemberRef{}, 7, 0, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(10), tp("t", 1): om(20)}))
			require.EqualValues(t, 5, offsetOf(c, "g", 0), "pending: not yet committed")
			require.EqualValues(t, -1, offsetOf(c, "g", 1))
			require.True(t, c.PendingTxn("g", "t", 0))
			require.True(t, c.PendingTxn("g", "t", 1))
			require.False(t, c.PendingTxn("g", "t", 2))

			// The same transaction commits partition 0 again: the later one
			// is pending.
			require.NoError(t, c.CommitTxn("g", MemberRef{}, 7, 0, one(0, 11)))
			require.NoError(t, endErr(c.EndTxn(7, 0, commit)))
			require.False(t, c.PendingTxn("g", "t", 0))
			require.False(t, c.PendingTxn("g", "t", 1))
			if commit {
				require.EqualValues(t, 11, offsetOf(c, "g", 0))
				require.EqualValues(t, 20, offsetOf(c, "g", 1))
			} else {
				require.EqualValues(t, 5, offsetOf(c, "g", 0))
				require.EqualValues(t, -1, offsetOf(c, "g", 1))
			}
			require.Len(t, l.entries, 4, "a plain batch, two transactional ones, the marker")
			require.True(t, l.entries[1].txn)
			require.Equal(t, int64(7), l.entries[1].pid)
			require.True(t, l.entries[3].marker)
			require.Equal(t, commit, l.entries[3].commit)
			r := l.replay()
			require.Equal(t, c.Offsets("g"), r.Offsets("g"), "a replay agrees")
			require.False(t, r.PendingTxn("g", "t", 0))
		})
	}
}

// TestCommitTxnLaterWins checks Kafka's rule for a transaction that
// commits: its offset replaces the partition's unless the partition's
// offset was set after the transaction wrote it (by a commit, or by
// another transaction that commits), as the log orders them.
func TestCommitTxnLaterWins(t *testing.T) {
	tests := []struct {
		name string
		ops  func(c *Coordinator) error
		want int64
	}{
		{"commit before the transaction", func(c *Coordinator) error {
			return firstErr(c.Commit("g", MemberRef{}, one(0, 50)), c.CommitTxn("g", MemberRef{}, 1, 0, one(0, 100)), endErr(c.EndTxn(1, 0, true)))
		}, 100},
		{"commit after the transaction's offset", func(c *Coordinator) error {
			return firstErr(c.CommitTxn("g", MemberRef{}, 1, 0, one(0, 100)), c.Commit("g", MemberRef{}, one(0, 50)), endErr(c.EndTxn(1, 0, true)))
		}, 50},
		{"a later transaction commits first", func(c *Coordinator) error {
			return firstErr(c.CommitTxn("g", MemberRef{}, 1, 0, one(0, 10)), c.CommitTxn("g", MemberRef{}, 2, 0, one(0, 20)),
				endErr(c.EndTxn(2, 0, true)), endErr(c.EndTxn(1, 0, true)))
		}, 20},
		{"an earlier transaction commits first", func(c *Coordinator) error {
			return firstErr(c.CommitTxn("g", MemberRef{}, 1, 0, one(0, 10)), c.CommitTxn("g", MemberRef{}, 2, 0, one(0, 20)),
				endErr(c.EndTxn(1, 0, true)), endErr(c.EndTxn(2, 0, true)))
		}, 20},
		{"a later transaction aborts", func(c *Coordinator) error {
			return firstErr(c.CommitTxn("g", MemberRef{}, 1, 0, one(0, 10)), c.CommitTxn("g", MemberRef{}, 2, 0, one(0, 20)),
				endErr(c.EndTxn(2, 0, false)), endErr(c.EndTxn(1, 0, true)))
		}, 10},
		{"a deletion drops the pending offset", func(c *Coordinator) error {
			return firstErr(c.CommitTxn("g", MemberRef{}, 1, 0, one(0, 10)), c.DeleteOffsets("g"), endErr(c.EndTxn(1, 0, true)))
		}, -1},
		{"a deletion before the transaction's offset", func(c *Coordinator) error {
			return firstErr(c.Commit("g", MemberRef{}, one(0, 5)), c.DeleteOffsets("g"), c.CommitTxn("g", MemberRef{}, 1, 0, one(0, 10)), endErr(c.EndTxn(1, 0, true)))
		}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, l, _ := newTxnFixture()
			require.NoError(t, tt.ops(c))
			require.Equal(t, tt.want, offsetOf(c, "g", 0))
			require.Equal(t, tt.want, offsetOf(l.replay(), "g", 0), "a replay agrees")
		})
	}
}

// endErr returns the error of an EndTxn.
func endErr(_ int64, err error) error { return err }

// firstErr returns the first non-nil error of errs.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func TestCommitTxnMembers(t *testing.T) {
	c, _, _ := newTxnFixture()
	ref, err := c.Join("g", []string{"t"})
	require.NoError(t, err)
	res, err := c.Sync("g", ref.MemberID)
	require.NoError(t, err)
	ref.Generation = res.Generation

	// A plain commit without a member is refused while the group has
	// members; a transactional one is not (the producer's epoch fences).
	require.ErrorIs(t, c.Commit("g", MemberRef{}, one(0, 1)), ErrGroupActive)
	require.NoError(t, c.CommitTxn("g", MemberRef{}, 1, 0, one(0, 1)))
	// A member commits what it owns, at its generation.
	require.NoError(t, c.CommitTxn("g", ref, 1, 0, one(1, 2)))
	stale := MemberRef{MemberID: ref.MemberID, Generation: ref.Generation - 1}
	require.ErrorIs(t, c.CommitTxn("g", stale, 1, 0, one(2, 3)), ErrFenced)
	require.ErrorIs(t, c.CommitTxn("g", MemberRef{MemberID: "g-99", Generation: 1}, 1, 0, one(2, 3)), ErrUnknownMember)
	require.False(t, c.PendingTxn("g", "t", 2), "a refused commit leaves nothing pending")
	require.NoError(t, endErr(c.EndTxn(1, 0, true)))
	require.EqualValues(t, 1, offsetOf(c, "g", 0))
	require.EqualValues(t, 2, offsetOf(c, "g", 1))
	require.EqualValues(t, -1, offsetOf(c, "g", 2))
}

func TestCommitTxnBadInput(t *testing.T) {
	c, l, _ := newTxnFixture()
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"negative producer id", func() error { return c.CommitTxn("g", MemberRef{}, -1, 0, one(0, 1)) }, ErrInvalidProducer},
		{"negative epoch", func() error { return c.CommitTxn("g", MemberRef{}, 1, -1, one(0, 1)) }, ErrInvalidProducer},
		{"end: negative producer id", func() error { return endErr(c.EndTxn(-1, 0, true)) }, ErrInvalidProducer},
		{"negative offset", func() error { return c.CommitTxn("g", MemberRef{}, 1, 0, one(0, -1)) }, ErrInvalidOffset},
		{"unknown partition", func() error { return c.CommitTxn("g", MemberRef{}, 1, 0, one(4, 1)) }, ErrUnknownPartition},
		{"empty group", func() error { return c.CommitTxn("", MemberRef{}, 1, 0, one(0, 1)) }, ErrInvalidGroup},
		{"plain offset log", func() error {
			return NewCoordinator(&memLog{}, nil).CommitTxn("g", MemberRef{}, 1, 0, one(0, 1))
		}, ErrTxnUnsupported},
		{"plain offset log: end", func() error { return endErr(NewCoordinator(&memLog{}, nil).EndTxn(1, 0, true)) }, ErrTxnUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, tt.call(), tt.want)
			require.Empty(t, l.entries, "nothing written")
			require.False(t, c.PendingTxn("g", "t", 0))
		})
	}
}

func TestCommitTxnLogErrors(t *testing.T) {
	c, l, _ := newTxnFixture()
	l.fail = errDisk
	require.ErrorIs(t, c.CommitTxn("g", MemberRef{}, 1, 0, one(0, 10)), errDisk)
	require.False(t, c.PendingTxn("g", "t", 0), "a failed append leaves nothing pending")

	l.fail = nil
	require.NoError(t, c.CommitTxn("g", MemberRef{}, 1, 0, one(0, 10)))
	l.fail = errDisk
	require.ErrorIs(t, endErr(c.EndTxn(1, 0, true)), errDisk)
	require.True(t, c.PendingTxn("g", "t", 0), "a failed marker ends nothing")
	require.EqualValues(t, -1, offsetOf(c, "g", 0))
	l.fail = nil
	require.NoError(t, endErr(c.EndTxn(1, 0, true)), "the end is retried")
	require.EqualValues(t, 10, offsetOf(c, "g", 0))
}

// TestReplayOpenTxn checks that a replay keeps the offsets of a
// transaction whose marker the log does not hold pending, for the
// transaction's coordinator to end after the restart.
func TestReplayOpenTxn(t *testing.T) {
	c, l, _ := newTxnFixture()
	require.NoError(t, c.Commit("g", MemberRef{}, one(0, 5)))
	require.NoError(t, c.CommitTxn("g", MemberRef{}, 3, 1, one(0, 10)))
	r := l.replay()
	require.EqualValues(t, 5, offsetOf(r, "g", 0))
	require.True(t, r.PendingTxn("g", "t", 0))
	r.CompleteTxn(3, true)
	require.EqualValues(t, 10, offsetOf(r, "g", 0))

	// A tombstone in a transactional batch drops the partition's pending
	// offset (Kafka's load does the same).
	r = NewCoordinator(nil, nil)
	r.ReplayTxn(4, Commit{Group: "g", Topic: "t", Partition: 0, Offset: 9})
	r.ReplayTxn(4, Commit{Group: "g", Topic: "t", Partition: 0, Deleted: true})
	require.False(t, r.PendingTxn("g", "t", 0))
	r.CompleteTxn(4, true)
	require.EqualValues(t, -1, offsetOf(r, "g", 0))
}

// TestTxnReplayProperty runs random mixes of commits, transactional
// commits of several producers, their ends and deletions, and checks after
// each step that a replay of the log gives the same committed and pending
// offsets as the live Coordinator.
func TestTxnReplayProperty(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 15))
		c, l, clock := newTxnFixture()
		for step := range 40 {
			clock.Advance(1)
			pid := int64(rng.IntN(3))
			p := rng.IntN(2)
			off := int64(rng.IntN(1000))
			var err error
			switch rng.IntN(6) {
			case 0:
				err = c.Commit("g", MemberRef{}, one(p, off))
			case 1, 2:
				err = c.CommitTxn("g", MemberRef{}, pid, 0, one(p, off))
			case 3:
				err = endErr(c.EndTxn(pid, 0, true))
			case 4:
				err = endErr(c.EndTxn(pid, 0, false))
			case 5:
				if rng.IntN(4) == 0 {
					err = c.DeleteOffsets("g", tp("t", p))
				}
			}
			require.NoError(t, err)
			r := l.replay()
			require.Equal(t, c.Offsets("g"), r.Offsets("g"), "seed %d step %d", seed, step)
			for p := range 2 {
				require.Equal(t, c.PendingTxn("g", "t", p), r.PendingTxn("g", "t", p), "seed %d step %d partition %d", seed, step, p)
			}
		}
	}
}

// TestTxnConcurrent runs transactions of many producers on one group at
// once, each committing its own partition and ending, under -race.
func TestTxnConcurrent(t *testing.T) {
	c, l, _ := newTxnFixture()
	var wg sync.WaitGroup
	for pid := range int64(8) {
		wg.Go(func() {
			for i := range int64(50) {
				if err := c.CommitTxn("g", MemberRef{}, pid, 0, one(int(pid%4), pid*1000+i)); err != nil {
					t.Error(err)
					return
				}
				if err := endErr(c.EndTxn(pid, 0, i%3 != 0)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	r := l.replay()
	require.Equal(t, c.Offsets("g"), r.Offsets("g"))
	for p := range 4 {
		require.False(t, c.PendingTxn("g", "t", p))
	}
}
