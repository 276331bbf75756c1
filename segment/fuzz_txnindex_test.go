package segment

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzTxnIndex takes arbitrary bytes as the .txnindex of a segment over
// [100, 200). Open must either trust them, and then hold every entry in
// order of last offset, each at or past the base offset, or fail with
// ErrCorrupt; OpenRecover must always succeed, keep the entries Open
// would have read up to the first bad one that end before the log does,
// and leave a file that a later Open trusts. Nothing panics. The seeds are
// Kafka's entries, a torn entry, a later version and an entry below the
// base.
func FuzzTxnIndex(f *testing.F) {
	a := AbortedTxn{ProducerID: 1, FirstOffset: 90, LastOffset: 120, LastStableOffset: 90}.appendTo(nil)
	b := AbortedTxn{ProducerID: 2, FirstOffset: 121, LastOffset: 150, LastStableOffset: 121}.appendTo(nil)
	past := AbortedTxn{ProducerID: 3, FirstOffset: 150, LastOffset: 250, LastStableOffset: 150}.appendTo(nil)
	later := append([]byte{0, 1}, a[2:]...)
	below := AbortedTxn{ProducerID: 1, FirstOffset: 1, LastOffset: 2}.appendTo(nil)
	for _, seed := range [][]byte{nil, a, append(b, a...), append(a, b[:20]...), later, below, append(a, past...)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fx, m := memFixture(t)
		s := txnSegment(t, fx)
		require.NoError(t, s.Close())
		path := filepath.Join(fx.dir, FileName(100, TxnIndexSuffix))
		writeFile(t, m, path, data)
		cfg := Config{MaxBytes: testMaxBytes}
		s, err := Open(fx.fsys, fx.dir, 100, cfg, false)
		var trusted []AbortedTxn
		switch {
		case err == nil:
			trusted = s.AbortedTxns()
			for i, e := range trusted {
				require.GreaterOrEqual(t, e.LastOffset, int64(100))
				if i > 0 {
					require.GreaterOrEqual(t, e.LastOffset, trusted[i-1].LastOffset)
				}
			}
			require.NoError(t, s.Close())
		case !errors.Is(err, ErrCorrupt):
			t.Fatalf("Open: %v", err)
		}
		s, _, err = OpenRecover(fx.fsys, fx.dir, 100, cfg)
		require.NoError(t, err)
		kept := s.AbortedTxns()
		for _, e := range kept {
			require.GreaterOrEqual(t, e.LastOffset, int64(100))
			require.Less(t, e.LastOffset, int64(200))
		}
		if trusted != nil {
			var want []AbortedTxn
			for _, e := range trusted {
				if e.LastOffset < 200 {
					want = append(want, e)
				}
			}
			require.Equal(t, want, append([]AbortedTxn(nil), kept...))
		}
		require.NoError(t, s.Close())
		s, err = Open(fx.fsys, fx.dir, 100, cfg, false)
		require.NoError(t, err, "a recovered .txnindex is trusted")
		require.Equal(t, append([]AbortedTxn(nil), kept...), append([]AbortedTxn(nil), s.AbortedTxns()...))
		require.NoError(t, s.Close())
	})
}
