package strata_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/kafkadir"
)

// FuzzVerify gives Verify a partition directory of arbitrary files: a
// .log, its .index and .timeindex, a .txnindex and a .snapshot cut from
// the input. It never panics and never fails (damage is a finding), and
// every finding names its file and problem.
func FuzzVerify(f *testing.F) {
	ts := time.UnixMilli(1_700_000_000_000)
	noPID := kafkadir.Opts{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	var seed []byte
	for off := int64(0); off < 30; off += 3 {
		seed = append(seed, kafkadir.Batch(off, off+2, kafkadir.Records(off, 3, ts), noPID)...)
	}
	f.Add(seed, uint16(200), uint16(16), uint16(24))
	f.Add(kafkadir.Legacy(1, 0, ts, []byte("k"), []byte("v")), uint16(40), uint16(0), uint16(0))
	f.Add(kafkadir.Snapshot([]kafkadir.ProducerEntry{{ProducerID: 3, LastOffset: 5}}), uint16(0), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, logLen, indexLen, timeLen uint16) {
		dir := t.TempDir()
		part := filepath.Join(dir, "events-0")
		require.NoError(t, os.MkdirAll(part, 0o755))
		rest := data
		take := func(n int) []byte {
			n = min(n, len(rest))
			b := rest[:n]
			rest = rest[n:]
			return b
		}
		files := []struct {
			suffix string
			data   []byte
		}{
			{".log", take(int(logLen))},
			{".index", take(int(indexLen))},
			{".timeindex", take(int(timeLen))},
			{".txnindex", take(len(rest) / 2)},
			{".snapshot", rest},
		}
		for _, fl := range files {
			require.NoError(t, os.WriteFile(filepath.Join(part, "00000000000000000000"+fl.suffix), fl.data, 0o644))
		}
		rep, err := strata.Verify(dir, nil)
		require.NoError(t, err)
		require.Equal(t, 1, rep.Segments)
		for _, fd := range rep.Findings {
			require.NotEmpty(t, fd.Problem)
			require.NotEmpty(t, fd.File)
		}
	})
}
