package partition

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// syncLog records the syncs (fsync, msync, directory fsync) a Mem makes,
// by operation and path.
type syncLog struct {
	mu  sync.Mutex
	ops []string
}

func (l *syncLog) injector(op vfs.Op, path string) error {
	if op == vfs.OpSync || op == vfs.OpSyncMap || op == vfs.OpSyncDir {
		l.mu.Lock()
		l.ops = append(l.ops, op.String()+" "+filepath.Base(path))
		l.mu.Unlock()
	}
	return nil
}

func (l *syncLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ops := l.ops
	l.ops = nil
	return ops
}

// TestSyncAlwaysSyncsOnlyTheLog: under SyncAlways with one appender, each
// Append of a batch makes exactly one sync, of the active segment's .log
// (its indexes, checkpoints and directory wait for the roll or Close), the
// .log is written with zeros ahead of the batches (segment.Config.ZeroFill)
// so that the sync has no file size or blocks to commit, and after a crash
// every record an Append returned is there. The first append also
// syncs the directory, for the index files it creates. Under SyncEvery the
// first append writes no zeros (the later ones do on Linux).
func TestSyncAlwaysSyncsOnlyTheLog(t *testing.T) {
	recs := make([]log.Record, 100)
	for i := range recs {
		recs[i] = log.Record{Key: fmt.Appendf(nil, "key-%012d", i), Value: make([]byte, 100)}
	}
	cfg := Config{SegmentBytes: 8 << 20, Sync: SyncAlways, Logger: slog.New(slog.DiscardHandler)}
	m := vfs.NewMem()
	var syncs syncLog
	m.SetInjector(syncs.injector)
	p, err := Open(m, "topic-0", cfg, false)
	require.NoError(t, err)
	syncs.take()
	logName := segment.FileName(0, segment.LogSuffix)
	_, err = p.Append(recs)
	require.NoError(t, err)
	// The first append that needs index entries creates the index files,
	// and syncs the directory that names them.
	require.Subset(t, []string{"syncdir topic-0", "sync " + logName}, syncs.take())
	for i := 1; i < 100; i++ {
		base, err := p.Append(recs)
		require.NoError(t, err)
		require.Equal(t, int64(i*len(recs)), base)
		require.Equal(t, []string{"sync " + logName}, syncs.take(), "append %d", i)
	}
	require.Len(t, p.Segments(), 1)
	fi, err := m.Stat("topic-0/" + logName)
	require.NoError(t, err)
	written := p.Stats().AppendedBytes
	require.Greater(t, fi.Size, written, "zeros ahead of the batches")

	after := m.Crash()
	p2, err := Open(after, "topic-0", cfg, false)
	require.NoError(t, err)
	require.Equal(t, int64(100*len(recs)), p2.EndOffset(), "every appended record survives")
	got := readRange(t, p2, 0)
	require.Len(t, got, 100*len(recs))
	for i, r := range got {
		require.Equal(t, recs[i%len(recs)].Key, r.Key)
	}
	require.NoError(t, p2.Close())
	fi, err = after.Stat("topic-0/" + logName)
	require.NoError(t, err)
	require.Equal(t, written, fi.Size, "Close trims the zeros")

	// Under another policy a segment's first append is written alone, and
	// in memory the later ones grow the file themselves (zeros are written
	// ahead of them only on the OS's files, on Linux).
	cfg.Sync = SyncEvery(0)
	p3, m3 := memPartition(t, cfg)
	_, err = p3.Append(recs)
	require.NoError(t, err)
	fi, err = m3.Stat("topic-0/" + logName)
	require.NoError(t, err)
	require.Equal(t, p3.Stats().AppendedBytes, fi.Size, "the first append writes no zeros")
	for range 10 {
		_, err := p3.Append(recs)
		require.NoError(t, err)
	}
	fi, err = m3.Stat("topic-0/" + logName)
	require.NoError(t, err)
	require.Equal(t, p3.Stats().AppendedBytes, fi.Size, "appends of a page or more are written, not filled ahead")
	require.NoError(t, p3.Close())
}
