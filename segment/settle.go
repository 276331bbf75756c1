package segment

import (
	"errors"
	"hash/crc32"
	"io"
	"time"

	"github.com/stratalog/strata/log"
)

// A reader of a segment that another process writes (a follower, or a
// check of a live directory) meets bytes after its last valid batch that
// are not a valid batch. They are one of: a batch the owner is copying in
// right now (it checks at a later read), a torn tail a crashed owner left
// (the next owner's recovery cuts it), or damage. The owner writes batches
// in order, one after the other, so the bytes are damage
//
//   - at once when a valid batch follows them (ValidAfter): the owner
//     wrote it after them;
//   - when they read the same after SettleWait (Unsettled): no copy takes
//     that long.
//
// A torn tail that a crashed owner left also reads the same, but looks
// torn (Torn): a batch that reaches past the end of the file, or whose
// last or first bytes are zeros, the reserved zeros a write stopped short
// of. It is not damage: the next owner's recovery cuts it.

// SettleWait is how long bad bytes after a live segment's last valid batch
// must read the same before a reader takes them for damage.
const SettleWait = time.Second

// settleWait is SettleWait, shortened by tests.
var settleWait = SettleWait

// Unsettled follows the bad bytes found after a live segment's last valid
// batch from one read to the next. The zero value has seen nothing.
type Unsettled struct {
	pos  int64
	sum  uint32
	n    int64
	seen time.Time
}

var settleTable = crc32.MakeTable(crc32.Castagnoli)

// Settled reports whether the bad bytes b found at pos at time now are the
// same as those found there SettleWait or more before. Other bytes, or
// another position, start the wait again. n is how many bytes the bad
// entry spans in the file as far as it holds it (the file's growth under
// a batch being written changes n even when b, its header, does not).
func (u *Unsettled) Settled(pos int64, b []byte, n int64, now time.Time) bool {
	sum := crc32.Checksum(b, settleTable)
	if u.seen.IsZero() || u.pos != pos || u.sum != sum || u.n != n {
		*u = Unsettled{pos: pos, sum: sum, n: n, seen: now}
		return false
	}
	return now.Sub(u.seen) >= settleWait
}

// tornZeros is how many zero bytes end bad bytes that Torn takes for a
// write cut short: a batch's last bytes are its last record's, which end
// in zeros that long only when its value does.
const tornZeros = 16

// Torn reports whether the bad bytes b (a batch, or its header) end in
// zeros, or start with a zero base offset and length, as a batch does that
// a crash stopped being copied into zeros the file held (preallocated, or
// reserved ahead of appends): a copy runs from the start on, but Go's copy
// of more than 256 bytes (runtime memmove on amd64) stores the first 32
// and the last 128 bytes after the rest.
func Torn(b []byte) bool {
	if len(b) >= log.PrefixSize && firstNonZero(b[:log.PrefixSize]) < 0 {
		return true // no batch has a length of 0
	}
	n := 0
	for i := len(b) - 1; i >= 0 && b[i] == 0; i-- {
		n++
	}
	return n >= min(tornZeros, len(b))
}

// Reset forgets what was seen: the bytes became a valid batch.
func (u *Unsettled) Reset() { *u = Unsettled{} }

// ValidAfter reports whether a valid batch (its header and CRC check)
// starts at pos of f, a file of size bytes: bad bytes that end at pos are
// then damage, not a batch being written. buf is a buffer it may use, and
// returns, grown.
func ValidAfter(f io.ReaderAt, pos, size int64, buf []byte) (bool, []byte) {
	if pos < 0 || pos+log.BatchHeaderSize > size {
		return false, buf
	}
	var hdr [log.BatchHeaderSize]byte
	if _, err := f.ReadAt(hdr[:], pos); err != nil && !errors.Is(err, io.EOF) {
		return false, buf
	}
	h, err := log.ReadHeader(hdr[:])
	if err != nil || int64(h.Size()) > size-pos {
		return false, buf
	}
	if cap(buf) < h.Size() {
		buf = make([]byte, h.Size())
	}
	b := buf[:h.Size()]
	if k, err := f.ReadAt(b, pos); k < len(b) && err != nil {
		return false, buf
	}
	_, err = log.CheckBatch(b)
	return err == nil, buf
}
