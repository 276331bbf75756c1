package strata_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
)

// txnView is what a partition holds, read batch by batch as a
// read_committed consumer reads it: the values of records outside
// transactions and of committed transactions (in the order of their
// markers, for those), the values of aborted ones, and of transactions
// still open.
type txnView struct {
	committed, aborted, open []string
	markers                  int
}

// viewTxns reads every batch of a partition into a txnView.
func viewTxns(t *testing.T, s *strata.Store, topicName string, part int) txnView {
	t.Helper()
	p, err := strata.PartitionOf(s, topicName, part)
	require.NoError(t, err)
	var (
		v       txnView
		pending = map[int64][]string{}
		buf     []byte
	)
	for off := p.StartOffset(); off < p.HighWatermark(); {
		buf, err = p.ReadBatches(buf, off, 1<<20)
		require.NoError(t, err)
		require.NotEmpty(t, buf)
		it := log.NewBatchIter(buf)
		for it.Next() {
			h := it.Header()
			off = h.NextOffset()
			recs, err := log.NewRecordIterHeader(it.Batch(), h)
			require.NoError(t, err)
			var r log.Record
			if h.IsControl() {
				for recs.Next(&r) {
					typ, err := log.ParseControlKey(r.Key)
					require.NoError(t, err)
					v.markers++
					if typ == log.ControlCommit {
						v.committed = append(v.committed, pending[h.ProducerID]...)
					} else {
						v.aborted = append(v.aborted, pending[h.ProducerID]...)
					}
					delete(pending, h.ProducerID)
				}
				continue
			}
			for recs.Next(&r) {
				if h.IsTransactional() {
					pending[h.ProducerID] = append(pending[h.ProducerID], string(r.Value))
				} else {
					v.committed = append(v.committed, string(r.Value))
				}
			}
		}
		require.NoError(t, it.Err())
	}
	for _, vals := range pending {
		v.open = append(v.open, vals...)
	}
	return v
}

// readCommitted reads a partition with a ReadCommitted reader, to the last
// stable offset, and returns the values, sorted.
func readCommitted(t *testing.T, s *strata.Store, topicName string, part int) []string {
	t.Helper()
	p, err := strata.PartitionOf(s, topicName, part)
	require.NoError(t, err)
	rd := p.NewReaderIsolation(p.StartOffset(), partition.ReadCommitted)
	defer rd.Close()
	var (
		out []string
		r   log.Record
	)
	for {
		ok, err := rd.Next(&r)
		require.NoError(t, err)
		if !ok {
			break
		}
		out = append(out, string(r.Value))
	}
	slices.Sort(out)
	return out
}
