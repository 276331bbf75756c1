package partition

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// latestByKey returns the value of each key's last record in recs, the
// fillers' left out.
func latestByKey(recs []log.Record) map[string]string {
	out := map[string]string{}
	for _, r := range recs {
		if string(r.Key) != "filler" {
			out[string(r.Key)] = string(r.Value)
		}
	}
	return out
}

// A compacted topic where a transaction aborted a newer value of a key:
// compaction removes the aborted value and keeps the committed one it did
// not replace, at both isolation levels; a committed transaction's records
// are compacted as data.
func TestCompactAbortedValue(t *testing.T) {
	p, _, clock := compactedPartition(t)
	defer p.Close()
	w := newTxnWriter(t, p)
	_, err := p.Append([]log.Record{{Key: []byte("account"), Value: []byte("balance=100")}})
	require.NoError(t, err)
	w.write(3, 0, 1) // k-3-0
	_, err = p.Append([]log.Record{{Key: []byte("k-3-0"), Value: []byte("plain")}})
	require.NoError(t, err)
	w.end(3, true)
	b, err := log.EncodeBatch(nil, []log.Record{{Key: []byte("account"), Value: []byte("balance=-50")}},
		log.BatchOptions{Idempotent: true, Transactional: true, ProducerID: 9, Now: clock.Now().UnixMilli()})
	require.NoError(t, err)
	first, err := p.AppendRawBatch(b)
	require.NoError(t, err)
	w.first[9] = first
	w.end(9, false)
	for len(p.Segments()) < 3 {
		_, err := p.Append([]log.Record{{Key: []byte("filler"), Value: make([]byte, 500)}})
		require.NoError(t, err)
	}
	want := map[string]string{"account": "balance=100", "k-3-0": "plain"}
	require.Equal(t, want, latestByKey(readIso(t, p, 0, ReadCommitted)))

	st, err := p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	require.Equal(t, int64(1), st.Aborted)
	for _, iso := range []Isolation{ReadUncommitted, ReadCommitted} {
		recs := readIso(t, p, 0, iso)
		require.Equal(t, want, latestByKey(recs), "%v", iso)
		for _, r := range recs {
			require.NotEqual(t, "balance=-50", string(r.Value), "%v: the aborted value is gone", iso)
		}
	}
	// Once the aborted record is gone its marker is not needed, and goes
	// after its delete horizon with its .txnindex entry.
	require.Len(t, p.AbortedTxns(0, p.EndOffset()), 1, "kept with its marker for this cleaning")
	for n := len(p.Segments()); len(p.Segments()) == n; {
		_, err := p.Append([]log.Record{{Key: []byte("filler"), Value: make([]byte, 500)}})
		require.NoError(t, err)
	}
	_, err = p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	require.Empty(t, p.AbortedTxns(0, p.EndOffset()))
	require.Equal(t, want, latestByKey(readIso(t, p, 0, ReadCommitted)))
}
