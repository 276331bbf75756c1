package partition

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// A partition laid out as a Kafka broker writes it, with transactions
// (one committed, one aborted in its segment, one aborted in the next
// segment after spanning the roll, interleaved with other records) and the
// .txnindex entries the broker writes, reads right at both levels, opened
// cleanly and after a crash.
func TestKafkaWrittenTransactions(t *testing.T) {
	ts := time.UnixMilli(1_600_000_000_000)
	var all, committed []string
	batch := func(from, n int64, o kafkadir.Opts, aborted bool) []byte {
		recs := kafkadir.Records(from, int(n), ts)
		for _, r := range recs {
			all = append(all, string(r.Value))
			if !aborted {
				committed = append(committed, string(r.Value))
			}
		}
		return kafkadir.Batch(from, from+n-1, recs, o)
	}
	none := kafkadir.Opts{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	txn := func(pid int64, seq int32, c log.Compression) kafkadir.Opts {
		return kafkadir.Opts{ProducerID: pid, BaseSequence: seq, Transactional: true, Codec: c}
	}
	dir := filepath.Join(t.TempDir(), "k-0")
	p := kafkadir.New(dir)
	p.IndexIntervalBytes = 256
	p.Roll(0)
	p.Append(batch(0, 5, none, false))
	p.Append(batch(5, 3, txn(2000, 0, log.None), false))
	p.Append(batch(8, 4, txn(3000, 0, log.LZ4), true))
	p.Append(batch(12, 2, txn(4000, 0, log.None), true))
	p.Append(batch(14, 3, txn(2000, 3, log.Gzip), false))
	p.Append(kafkadir.Control(17, true, 2000, 0, ts))
	p.Append(batch(18, 2, txn(3000, 4, log.None), true))
	p.Append(kafkadir.Control(20, false, 3000, 0, ts))
	p.Abort(3000, 8, 20, 8)
	p.Append(batch(21, 5, none, false))
	p.Roll(26)
	p.Append(batch(26, 3, txn(4000, 2, log.Zstd), true))
	p.Append(batch(29, 2, none, false))
	p.Append(kafkadir.Control(31, false, 4000, 0, ts))
	p.Abort(4000, 12, 31, 12)
	p.Append(batch(32, 4, none, false))
	_, err := p.Write(kafkadir.Files{Extras: true})
	require.NoError(t, err)

	for _, clean := range []bool{true, false} {
		t.Run(fmt.Sprint("clean=", clean), func(t *testing.T) {
			cfg := small(newClock())
			part, err := Open(vfs.OS, dir, cfg, clean)
			require.NoError(t, err)
			defer part.Close()
			require.Equal(t, all, values(readIso(t, part, 0, ReadUncommitted)))
			require.Equal(t, committed, values(readIso(t, part, 0, ReadCommitted)))
			for from := int64(0); from < 36; from++ {
				var want []string
				for _, r := range readIso(t, part, 0, ReadCommitted) {
					if r.Offset >= from {
						want = append(want, string(r.Value))
					}
				}
				require.Equal(t, want, values(readIso(t, part, from, ReadCommitted)), "from %d", from)
			}
			require.Equal(t, []AbortedTxn{{ProducerID: 3000, FirstOffset: 8, LastOffset: 20, LastStableOffset: 8}, {ProducerID: 4000, FirstOffset: 12, LastOffset: 31, LastStableOffset: 12}},
				part.AbortedTxns(0, 36))
		})
	}
}
