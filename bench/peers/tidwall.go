package peers

import (
	"github.com/tidwall/wal"
)

func init() {
	register(Peer{
		Name: "tidwall-wal",
		Open: openTidwall,
		Note: "github.com/tidwall/wal: Write for 1, WriteBatch for more; Read per index with NoCopy; NoSync unless durable; entry = key length, key, value; its default SegmentCacheSize (2 segments of 20 MB), so a random read outside them loads a whole segment",
	})
}

type tidwallLog struct {
	l     *wal.Log
	next  uint64 // the index the next record gets (the peer's indexes start at 1)
	batch wal.Batch
	buf   []byte
}

func openTidwall(dir string, o Options) (Log, error) {
	l, err := wal.Open(dir, &wal.Options{NoSync: !o.Durable, NoCopy: true})
	if err != nil {
		return nil, err
	}
	last, err := l.LastIndex()
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	return &tidwallLog{l: l, next: last + 1}, nil
}

func (t *tidwallLog) Append(recs []Rec) error {
	if len(recs) == 1 {
		t.buf = appendKV(t.buf[:0], recs[0].Key, recs[0].Value)
		if err := t.l.Write(t.next, t.buf); err != nil {
			return err
		}
		t.next++
		return nil
	}
	t.batch.Clear()
	for i, r := range recs {
		t.buf = appendKV(t.buf[:0], r.Key, r.Value)
		t.batch.Write(t.next+uint64(i), t.buf)
	}
	if err := t.l.WriteBatch(&t.batch); err != nil {
		return err
	}
	t.next += uint64(len(recs))
	return nil
}

func (t *tidwallLog) Scan(from int64, fn func(i int64, key, value []byte) bool) error {
	end := int64(t.next - 1)
	for i := from; i < end; i++ {
		b, err := t.l.Read(uint64(i) + 1)
		if err != nil {
			return err
		}
		k, v, err := splitKV(b)
		if err != nil {
			return err
		}
		if !fn(i, k, v) {
			break
		}
	}
	return nil
}

func (t *tidwallLog) Get(i int64, fn func(key, value []byte)) error {
	b, err := t.l.Read(uint64(i) + 1)
	if err != nil {
		return err
	}
	k, v, err := splitKV(b)
	if err != nil {
		return err
	}
	fn(k, v)
	return nil
}

func (t *tidwallLog) Close() error {
	return t.l.Close()
}
