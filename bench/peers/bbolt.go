package peers

import (
	"errors"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

func init() {
	register(Peer{
		Name: "bbolt",
		Open: openBolt,
		Note: "go.etcd.io/bbolt: one bucket, key = 8-byte big-endian index, value = key length, key, value; db.Update per call (NoSync unless durable); Scan with a cursor in one View; Get in a View per lookup",
	})
}

var boltBucket = []byte("log")

// errMissing is a record a peer does not have.
var errMissing = errors.New("peers: no such record")

type boltLog struct {
	db   *bolt.DB
	next int64
	key  []byte
	buf  []byte
}

func openBolt(dir string, o Options) (Log, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	db, err := bolt.Open(filepath.Join(dir, "bolt.db"), 0o644, &bolt.Options{NoSync: !o.Durable})
	if err != nil {
		return nil, err
	}
	b := &boltLog{db: db}
	err = db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(boltBucket)
		if err != nil {
			return err
		}
		if k, _ := bk.Cursor().Last(); k != nil {
			b.next = int64(be64(k)) + 1
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return b, nil
}

func (b *boltLog) Append(recs []Rec) error {
	err := b.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(boltBucket)
		for i, r := range recs {
			// Put keeps references to key and value until the transaction
			// commits: each needs bytes of its own, so the buffers are cut
			// from one that is not reused within the transaction.
			ks := len(b.key)
			b.key = indexKey(b.key, b.next+int64(i))
			start := len(b.buf)
			b.buf = appendKV(b.buf, r.Key, r.Value)
			if err := bk.Put(b.key[ks:], b.buf[start:]); err != nil {
				return err
			}
		}
		return nil
	})
	b.key, b.buf = b.key[:0], b.buf[:0]
	if err != nil {
		return err
	}
	b.next += int64(len(recs))
	return nil
}

func (b *boltLog) Scan(from int64, fn func(i int64, key, value []byte) bool) error {
	end := b.next
	var k [8]byte
	return b.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(boltBucket).Cursor()
		for kk, v := c.Seek(indexKey(k[:0], from)); kk != nil; kk, v = c.Next() {
			i := int64(be64(kk))
			if i >= end {
				break
			}
			key, value, err := splitKV(v)
			if err != nil {
				return err
			}
			if !fn(i, key, value) {
				break
			}
		}
		return nil
	})
}

func (b *boltLog) Get(i int64, fn func(key, value []byte)) error {
	var k [8]byte
	return b.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(boltBucket).Get(indexKey(k[:0], i))
		if v == nil {
			return errMissing
		}
		key, value, err := splitKV(v)
		if err != nil {
			return err
		}
		fn(key, value)
		return nil
	})
}

func (b *boltLog) Close() error {
	return b.db.Close()
}
