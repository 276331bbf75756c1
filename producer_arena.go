package strata

// arena holds a batch's records with copies of their bytes. Arenas are
// recycled, so that a steady stream of records allocates nothing.
type arena struct {
	recs []Record
	cbs  []func(Position, error)
	hdrs []Header
	buf  []byte // never nil, so that a copied empty slice stays non-nil
}

func newArena(batchBytes int) *arena {
	if a, ok := arenas.Get().(*arena); ok {
		return a
	}
	return &arena{buf: make([]byte, 0, batchBytes)}
}

// add appends a copy of r to the arena.
func (a *arena) add(r *Record, cb func(Position, error)) {
	rec := Record{Timestamp: r.Timestamp, Key: a.copy(r.Key), Value: a.copy(r.Value)}
	if len(r.Headers) > 0 {
		start := len(a.hdrs)
		for _, h := range r.Headers {
			a.hdrs = append(a.hdrs, Header{Key: h.Key, Value: a.copy(h.Value)})
		}
		// Earlier records keep their headers if hdrs grows: the old array
		// stays as it is.
		rec.Headers = a.hdrs[start:len(a.hdrs):len(a.hdrs)]
	}
	a.recs = append(a.recs, rec)
	a.cbs = append(a.cbs, cb)
}

// copy returns a copy of b in the arena: nil for nil, non-nil otherwise.
func (a *arena) copy(b []byte) []byte {
	if b == nil {
		return nil
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[start:len(a.buf):len(a.buf)]
}

// free drops the arena's references and recycles it.
func (a *arena) free() {
	clear(a.recs)
	clear(a.cbs)
	clear(a.hdrs)
	if cap(a.buf) > maxPooledArena {
		return
	}
	a.recs, a.cbs, a.hdrs, a.buf = a.recs[:0], a.cbs[:0], a.hdrs[:0], a.buf[:0]
	arenas.Put(a)
}
