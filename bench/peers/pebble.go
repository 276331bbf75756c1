package peers

import (
	"errors"
	"log"

	"github.com/cockroachdb/pebble/v2"
)

func init() {
	register(Peer{
		Name: "pebble",
		Open: openPebble,
		Note: "github.com/cockroachdb/pebble/v2 with its default Options (but a Logger that drops informational lines): key = 8-byte big-endian index, value = key length, key, value; Set for 1, a Batch for more, pebble.NoSync or pebble.Sync; an Iterator for Scan, Get (+ its closer)",
	})
}

// quietLogger drops pebble's informational messages (a line per WAL at
// each Open) and keeps its errors.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}

func (quietLogger) Errorf(format string, args ...any) { log.Printf("pebble: "+format, args...) }

func (quietLogger) Fatalf(format string, args ...any) { log.Fatalf("pebble: "+format, args...) }

type pebbleLog struct {
	db    *pebble.DB
	wo    *pebble.WriteOptions
	next  int64
	batch *pebble.Batch
	key   []byte
	buf   []byte
}

func openPebble(dir string, o Options) (Log, error) {
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}})
	if err != nil {
		return nil, err
	}
	p := &pebbleLog{db: db, wo: pebble.NoSync}
	if o.Durable {
		p.wo = pebble.Sync
	}
	it, err := db.NewIter(nil)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	if it.Last() {
		p.next = int64(be64(it.Key())) + 1
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		_ = db.Close()
		return nil, err
	}
	p.batch = db.NewBatch()
	return p, nil
}

func (p *pebbleLog) Append(recs []Rec) error {
	if len(recs) == 1 {
		p.key = indexKey(p.key[:0], p.next)
		p.buf = appendKV(p.buf[:0], recs[0].Key, recs[0].Value)
		if err := p.db.Set(p.key, p.buf, p.wo); err != nil {
			return err
		}
		p.next++
		return nil
	}
	p.batch.Reset()
	for i, r := range recs {
		p.key = indexKey(p.key[:0], p.next+int64(i))
		p.buf = appendKV(p.buf[:0], r.Key, r.Value)
		if err := p.batch.Set(p.key, p.buf, nil); err != nil {
			return err
		}
	}
	if err := p.batch.Commit(p.wo); err != nil {
		return err
	}
	p.next += int64(len(recs))
	return nil
}

func (p *pebbleLog) Scan(from int64, fn func(i int64, key, value []byte) bool) error {
	var lo, hi [8]byte
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: indexKey(lo[:0], from), UpperBound: indexKey(hi[:0], p.next)})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return err
		}
		key, value, err := splitKV(v)
		if err != nil {
			_ = it.Close()
			return err
		}
		if !fn(int64(be64(it.Key())), key, value) {
			break
		}
	}
	return errors.Join(it.Error(), it.Close())
}

func (p *pebbleLog) Get(i int64, fn func(key, value []byte)) error {
	var k [8]byte
	v, closer, err := p.db.Get(indexKey(k[:0], i))
	if err != nil {
		return err
	}
	key, value, err := splitKV(v)
	if err == nil {
		fn(key, value)
	}
	return errors.Join(err, closer.Close())
}

func (p *pebbleLog) Close() error {
	return errors.Join(p.batch.Close(), p.db.Close())
}
