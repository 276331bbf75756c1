package segment

import (
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// txnSegment creates a segment at base 100 holding batches over
// [100, 200), so entries in that range can be appended.
func txnSegment(t *testing.T, fx fixture) *Segment {
	t.Helper()
	s, err := Create(fx.fsys, fx.dir, 100, Config{MaxBytes: testMaxBytes})
	require.NoError(t, err)
	for s.NextOffset() < 200 {
		require.NoError(t, s.Append(encode(t, makeRecords(s.NextOffset(), 10, 20, 1_700_000_000_000))))
	}
	return s
}

func exists(fsys vfs.FS, path string) bool {
	_, err := fsys.Stat(path)
	return err == nil
}

func TestTxnIndexWrittenAndReopened(t *testing.T) {
	eachFS(t, func(t *testing.T, fx fixture) {
		s := txnSegment(t, fx)
		path := filepath.Join(fx.dir, FileName(100, TxnIndexSuffix))
		require.False(t, exists(fx.fsys, path), "no .txnindex before the first entry")
		require.Empty(t, s.AbortedTxns())

		a := AbortedTxn{ProducerID: 7, FirstOffset: 90, LastOffset: 120, LastStableOffset: 90}
		b := AbortedTxn{ProducerID: 8, FirstOffset: 121, LastOffset: 150, LastStableOffset: 121}
		require.NoError(t, s.AppendAbortedTxn(a))
		require.True(t, exists(fx.fsys, path))
		seen := s.AbortedTxns()
		require.NoError(t, s.AppendAbortedTxn(b))
		require.NoError(t, s.AppendAbortedTxn(a), "a replayed marker")
		require.Equal(t, []AbortedTxn{a}, seen, "a slice returned earlier does not change")
		require.Equal(t, []AbortedTxn{a, b}, s.AbortedTxns())
		require.NoError(t, s.Sync())
		require.NoError(t, s.Close())

		s, err := Open(fx.fsys, fx.dir, 100, Config{MaxBytes: testMaxBytes}, true)
		require.NoError(t, err)
		require.Equal(t, []AbortedTxn{a, b}, s.AbortedTxns())
		c := AbortedTxn{ProducerID: 9, FirstOffset: 100, LastOffset: 199, LastStableOffset: 100}
		require.NoError(t, s.AppendAbortedTxn(c))
		require.NoError(t, s.Close())
		s, err = Open(fx.fsys, fx.dir, 100, Config{MaxBytes: testMaxBytes}, false)
		require.NoError(t, err)
		require.Equal(t, []AbortedTxn{a, b, c}, s.AbortedTxns())
		require.NoError(t, s.Close())
	})
}

// The file holds Kafka's AbortedTxn entries byte for byte, and a file
// Kafka wrote reads back.
func TestTxnIndexKafkaBytes(t *testing.T) {
	fx, m := memFixture(t)
	s := txnSegment(t, fx)
	require.NoError(t, s.AppendAbortedTxn(AbortedTxn{ProducerID: 0x0102030405060708, FirstOffset: 101, LastOffset: 150, LastStableOffset: 99}))
	require.NoError(t, s.Close())
	path := filepath.Join(fx.dir, FileName(100, TxnIndexSuffix))
	got := readFile(t, m, path)
	want := unhexT(t, `0000 0102030405060708 0000000000000065 0000000000000096 0000000000000063`)
	require.Equal(t, want, got)

	// Two entries as Kafka's TransactionIndexTest writes them (version 0),
	// the file being all there is of them.
	kafka := unhexT(t, `
0000 0000000000000000 0000000000000064 00000000000000c7 0000000000000064
0000 0000000000000001 0000000000000070 00000000000000c6 0000000000000064`)
	writeFile(t, m, path, kafka)
	s, err := Open(fx.fsys, fx.dir, 100, Config{MaxBytes: testMaxBytes}, false)
	require.NoError(t, err)
	require.Equal(t, []AbortedTxn{
		{ProducerID: 1, FirstOffset: 112, LastOffset: 198, LastStableOffset: 100},
		{ProducerID: 0, FirstOffset: 100, LastOffset: 199, LastStableOffset: 100},
	}, s.AbortedTxns(), "sorted by last offset")
	require.NoError(t, s.Close())
}

func TestTxnIndexRefuses(t *testing.T) {
	fx, _ := memFixture(t)
	s := txnSegment(t, fx)
	defer s.Close()
	for name, c := range map[string]struct {
		e   AbortedTxn
		why string
	}{
		"below base":     {AbortedTxn{ProducerID: 1, FirstOffset: 10, LastOffset: 99}, "marker outside"},
		"past the end":   {AbortedTxn{ProducerID: 1, FirstOffset: 150, LastOffset: 200}, "marker outside"},
		"first > last":   {AbortedTxn{ProducerID: 1, FirstOffset: 160, LastOffset: 150}, "starts at 160"},
		"no producer":    {AbortedTxn{ProducerID: -1, FirstOffset: 100, LastOffset: 150}, "no producer id"},
		"negative first": {AbortedTxn{ProducerID: 1, FirstOffset: -1, LastOffset: 150}, "starts at -1"},
	} {
		err := s.AppendAbortedTxn(c.e)
		require.ErrorIs(t, err, ErrInvalidBatch, name)
		require.ErrorContains(t, err, c.why, name)
	}
	require.Empty(t, s.AbortedTxns())
	require.False(t, exists(fx.fsys, filepath.Join(fx.dir, FileName(100, TxnIndexSuffix))))
}

// Truncation drops the entries whose markers it removes; a recovery drops
// those past what it keeps and a torn entry.
func TestTxnIndexTruncateAndRecover(t *testing.T) {
	fx, m := memFixture(t)
	s := txnSegment(t, fx)
	a := AbortedTxn{ProducerID: 1, FirstOffset: 100, LastOffset: 120, LastStableOffset: 100}
	b := AbortedTxn{ProducerID: 2, FirstOffset: 121, LastOffset: 160, LastStableOffset: 121}
	require.NoError(t, s.AppendAbortedTxn(a))
	require.NoError(t, s.AppendAbortedTxn(b))
	require.NoError(t, s.truncate(160))
	require.Equal(t, []AbortedTxn{a}, s.AbortedTxns())
	require.NoError(t, s.Close())
	path := filepath.Join(fx.dir, FileName(100, TxnIndexSuffix))
	require.Len(t, readFile(t, m, path), AbortedTxnSize)

	// Rewrite (a truncation of a sealed segment) keeps the entries below
	// the cut.
	s, err := Open(fx.fsys, fx.dir, 100, Config{MaxBytes: testMaxBytes}, false)
	require.NoError(t, err)
	n, err := s.Rewrite(150, nil)
	require.NoError(t, err)
	require.Equal(t, []AbortedTxn{a}, n.AbortedTxns())
	require.NoError(t, s.Close())
	n2, err := n.Rewrite(120, nil)
	require.NoError(t, err)
	require.Empty(t, n2.AbortedTxns())
	require.NoError(t, n.Close())
	require.NoError(t, n2.Close())
	require.Empty(t, readFile(t, m, path), "the rewritten segment's empty .txnindex replaced the old one")

	// A torn entry and one past the log's end (now 120) after a crash.
	a.LastOffset = 115
	writeFile(t, m, path, append(append(a.appendTo(nil), AbortedTxn{ProducerID: 3, FirstOffset: 110, LastOffset: 500}.appendTo(nil)...), 0, 0, 1))
	_, err = Open(fx.fsys, fx.dir, 100, Config{MaxBytes: testMaxBytes}, true)
	require.ErrorIs(t, err, ErrCorrupt, "a torn .txnindex is not trusted")
	s, _, err = OpenRecover(fx.fsys, fx.dir, 100, Config{MaxBytes: testMaxBytes})
	require.NoError(t, err)
	require.Equal(t, []AbortedTxn{a}, s.AbortedTxns())
	require.NoError(t, s.Close())
	require.Equal(t, a.appendTo(nil), readFile(t, m, path))
}

// A damaged entry fails Open with ErrCorrupt; recovery keeps the entries
// before it.
func TestTxnIndexDamage(t *testing.T) {
	for name, entry := range map[string]string{
		"version 1":  "0001 0000000000000001 0000000000000064 0000000000000070 0000000000000064",
		"below base": "0000 0000000000000001 0000000000000001 0000000000000002 0000000000000001",
	} {
		t.Run(name, func(t *testing.T) {
			fx, m := memFixture(t)
			s := txnSegment(t, fx)
			a := AbortedTxn{ProducerID: 1, FirstOffset: 100, LastOffset: 120, LastStableOffset: 100}
			require.NoError(t, s.AppendAbortedTxn(a))
			require.NoError(t, s.Close())
			path := filepath.Join(fx.dir, FileName(100, TxnIndexSuffix))
			writeFile(t, m, path, append(readFile(t, m, path), unhexT(t, entry)...))
			_, err := Open(fx.fsys, fx.dir, 100, Config{MaxBytes: testMaxBytes}, false)
			require.ErrorIs(t, err, ErrCorrupt)
			s, _, err = OpenRecover(fx.fsys, fx.dir, 100, Config{MaxBytes: testMaxBytes})
			require.NoError(t, err)
			require.Equal(t, []AbortedTxn{a}, s.AbortedTxns())
			require.NoError(t, s.Close())
		})
	}
}

// The .txnindex goes with its segment: renamed to .deleted, removed, and
// moved by the temporary-name protocol.
func TestTxnIndexFollowsSegment(t *testing.T) {
	fx, _ := memFixture(t)
	s := txnSegment(t, fx)
	require.NoError(t, s.AppendAbortedTxn(AbortedTxn{ProducerID: 1, FirstOffset: 100, LastOffset: 120}))
	path := filepath.Join(fx.dir, FileName(100, TxnIndexSuffix))
	require.NoError(t, s.MarkDeleted())
	require.False(t, exists(fx.fsys, path))
	require.True(t, exists(fx.fsys, path+DeletedSuffix))
	require.NoError(t, s.Delete())
	require.False(t, exists(fx.fsys, path+DeletedSuffix))

	c, err := CreateTemp(fx.fsys, fx.dir, 100, CleanedSuffix, Config{MaxBytes: testMaxBytes})
	require.NoError(t, err)
	require.True(t, exists(fx.fsys, path+CleanedSuffix), "a temporary segment has its .txnindex at once")
	require.NoError(t, c.Append(encode(t, makeRecords(100, 5, 10, 1))))
	e := AbortedTxn{ProducerID: 2, FirstOffset: 100, LastOffset: 103, LastStableOffset: 100}
	require.NoError(t, c.AppendAbortedTxn(e))
	require.NoError(t, c.Seal())
	require.NoError(t, c.Sync())
	require.NoError(t, c.Close())
	require.NoError(t, RenameTemp(fx.fsys, fx.dir, 100, CleanedSuffix, SwapSuffix))
	require.True(t, exists(fx.fsys, path+SwapSuffix))
	require.NoError(t, RenameTemp(fx.fsys, fx.dir, 100, SwapSuffix, ""))
	o, err := Open(fx.fsys, fx.dir, 100, Config{MaxBytes: testMaxBytes}, false)
	require.NoError(t, err)
	require.Equal(t, []AbortedTxn{e}, o.AbortedTxns())
	require.NoError(t, o.Close())
	require.NoError(t, RemoveFiles(fx.fsys, fx.dir, 100, ""))
	require.False(t, exists(fx.fsys, path))
}

// Readers load the entries while the writer appends (run with -race).
func TestTxnIndexConcurrentReaders(t *testing.T) {
	fx, _ := memFixture(t)
	s := txnSegment(t, fx)
	defer s.Close()
	done, stop := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			list := s.AbortedTxns()
			for i := 1; i < len(list); i++ {
				if list[i].LastOffset <= list[i-1].LastOffset {
					panic("entries out of order")
				}
			}
		}
	}()
	for off := int64(100); off < 200; off++ {
		require.NoError(t, s.AppendAbortedTxn(AbortedTxn{ProducerID: off, FirstOffset: 100, LastOffset: off}))
	}
	close(stop)
	<-done
	require.Len(t, s.AbortedTxns(), 100)
}

func unhexT(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	require.NoError(t, err)
	return b
}
