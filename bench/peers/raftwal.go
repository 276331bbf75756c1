package peers

import (
	"errors"
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftwal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
)

func init() {
	register(Peer{
		Name: "raft-wal",
		Open: openRaftWAL,
		Note: "github.com/hashicorp/raft-wal: StoreLogs per call, GetLog per index; it fsyncs every call, so its non-durable rows are its only (durable) mode",
	})
}

type raftWAL struct {
	w    *raftwal.WAL
	meta *metadb.BoltMetaDB // WAL.Close leaves it open: Close closes it
	next uint64             // the index the next record gets (from 1)
	logs []raft.Log
	ptrs []*raft.Log
	buf  []byte
	got  raft.Log
}

func openRaftWAL(dir string, _ Options) (Log, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	meta := new(metadb.BoltMetaDB)
	w, err := raftwal.Open(dir, raftwal.WithLogger(hclog.NewNullLogger()), raftwal.WithMetaStore(meta))
	if err != nil {
		_ = meta.Close()
		return nil, err
	}
	r := &raftWAL{w: w, meta: meta}
	last, err := w.LastIndex()
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	r.next = last + 1
	return r, nil
}

func (r *raftWAL) Append(recs []Rec) error {
	r.buf = r.buf[:0]
	r.logs = r.logs[:0]
	for _, rec := range recs {
		start := len(r.buf)
		r.buf = appendKV(r.buf, rec.Key, rec.Value)
		r.logs = append(r.logs, raft.Log{Index: r.next + uint64(len(r.logs)), Data: r.buf[start:len(r.buf):len(r.buf)]})
	}
	// r.buf may have moved while it grew: point every entry at its bytes now.
	off := 0
	r.ptrs = r.ptrs[:0]
	for i := range r.logs {
		n := len(r.logs[i].Data)
		r.logs[i].Data = r.buf[off : off+n : off+n]
		off += n
		r.ptrs = append(r.ptrs, &r.logs[i])
	}
	if err := r.w.StoreLogs(r.ptrs); err != nil {
		return err
	}
	r.next += uint64(len(recs))
	return nil
}

func (r *raftWAL) Scan(from int64, fn func(i int64, key, value []byte) bool) error {
	end := int64(r.next - 1)
	for i := from; i < end; i++ {
		if err := r.w.GetLog(uint64(i)+1, &r.got); err != nil {
			return err
		}
		k, v, err := splitKV(r.got.Data)
		if err != nil {
			return err
		}
		if !fn(i, k, v) {
			break
		}
	}
	return nil
}

func (r *raftWAL) Get(i int64, fn func(key, value []byte)) error {
	if err := r.w.GetLog(uint64(i)+1, &r.got); err != nil {
		return err
	}
	k, v, err := splitKV(r.got.Data)
	if err != nil {
		return err
	}
	fn(k, v)
	return nil
}

func (r *raftWAL) Close() error {
	return errors.Join(r.w.Close(), r.meta.Close())
}
