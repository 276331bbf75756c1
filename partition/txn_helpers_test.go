package partition

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// txnWriter writes transactions into a partition for the tests: the
// transactional batches of producers, and the markers ending them.
type txnWriter struct {
	t     testing.TB
	p     *Partition
	seq   map[int64]int32
	first map[int64]int64 // the open transaction's first offset, per producer
}

func newTxnWriter(t testing.TB, p *Partition) *txnWriter {
	return &txnWriter{t: t, p: p, seq: map[int64]int32{}, first: map[int64]int64{}}
}

// txnRec is the record the tests write for a producer's n-th record.
func txnRec(pid int64, n int) log.Record {
	return log.Record{Key: fmt.Appendf(nil, "k-%d-%d", pid, n%5), Value: fmt.Appendf(nil, "p%d-%d", pid, n)}
}

// write appends one transactional batch of n records of producer pid,
// named from id on, and returns its base offset.
func (w *txnWriter) write(pid int64, id, n int) int64 {
	w.t.Helper()
	recs := make([]log.Record, n)
	for i := range recs {
		recs[i] = txnRec(pid, id+i)
	}
	base, dup, err := w.p.AppendProduced(recs, ProducerBatch{ID: pid, Seq: w.seq[pid], Transactional: true}, log.None, 0)
	require.NoError(w.t, err)
	require.False(w.t, dup)
	w.seq[pid] += int32(n)
	if _, open := w.first[pid]; !open {
		w.first[pid] = base
	}
	return base
}

// end writes producer pid's marker, COMMIT or ABORT, and returns its
// offset.
func (w *txnWriter) end(pid int64, commit bool) int64 {
	w.t.Helper()
	off, err := w.p.WriteMarker(pid, 0, commit, 0)
	require.NoError(w.t, err)
	delete(w.first, pid)
	return off
}

// readIso reads every record from offset from to the end at level iso.
func readIso(t testing.TB, p *Partition, from int64, iso Isolation) []log.Record {
	t.Helper()
	r := p.NewReaderIsolation(from, iso)
	defer r.Close()
	var out []log.Record
	for {
		var x log.Record
		ok, err := r.Next(&x)
		require.NoError(t, err)
		if !ok {
			return out
		}
		x.Key, x.Value = bytes.Clone(x.Key), bytes.Clone(x.Value)
		out = append(out, x)
	}
}

// values returns the values of recs as strings.
func values(recs []log.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, string(r.Value))
	}
	return out
}
