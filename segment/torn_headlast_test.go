package segment

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFollowTornHeadLast: Go's copy of more than 256 bytes (runtime
// memmove on amd64 with AVX) stores the body first and the first 32 and
// last 128 bytes last, so an owner killed while it copies a batch into the
// mapping leaves the batch's start and end zeros around written bytes. A
// follower takes that for a torn tail, as the next owner's recovery does,
// never for damage, however long it reads the same.
func TestFollowTornHeadLast(t *testing.T) {
	defer func(d time.Duration) { settleWait = d }(settleWait)
	settleWait = 0
	eachFS(t, func(t *testing.T, fx fixture) {
		cfg := Config{MaxBytes: 1 << 20, IndexIntervalBytes: 256}
		w, err := Create(fx.fsys, fx.dir, 0, cfg)
		require.NoError(t, err)
		written := appendRandom(t, w, rand.New(rand.NewPCG(5, 6)), 5, 4, 200)
		recs := makeRecords(w.NextOffset(), 4, 300, 1_700_000_000_000)
		b := encode(t, recs)
		require.NoError(t, w.Append(b))
		written = append(written, writtenBatch{b, recs})
		require.NoError(t, w.Close())
		last := written[len(written)-1].bytes
		require.Greater(t, len(last), 256)
		var pos int64
		for _, b := range written[:len(written)-1] {
			pos += int64(len(b.bytes))
		}
		torn := append([]byte(nil), last...)
		clear(torn[:32])
		clear(torn[len(torn)-128:])
		g, err := fx.fsys.OpenFile(fx.dir+"/"+FileName(0, LogSuffix), os.O_RDWR, 0)
		require.NoError(t, err)
		_, err = g.WriteAt(append(torn, make([]byte, 4096)...), pos) // and zeros ahead
		require.NoError(t, err)
		require.NoError(t, g.Close())

		f, err := OpenFollow(fx.fsys, fx.dir, 0, cfg, false)
		require.NoError(t, err)
		defer f.Close()
		require.Equal(t, pos, f.Size())
		for range 3 {
			_, err = f.Extend()
			require.NoError(t, err)
			require.NoError(t, f.TailDamage(), "a batch whose copy was cut short")
		}
	})
}
