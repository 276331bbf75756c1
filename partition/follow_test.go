package partition

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// followRecords appends n records valued prefix-i to p.
func followRecords(t *testing.T, p *Partition, prefix string, n int) {
	t.Helper()
	for i := range n {
		_, err := p.Append([]log.Record{{Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}})
		require.NoError(t, err)
	}
}

// TestFollowDirectoryReplaced: a read-only partition whose directory is
// removed and made again for another topic of the name (another
// partition.metadata) does not take the new directory's segments for its
// own: it keeps what it read, as for a deleted topic.
func TestFollowDirectoryReplaced(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "t-0")
	cfg := Config{Sync: SyncPolicy{Mode: SyncModeNever}}
	w, err := Open(vfs.OS, dir, cfg, false)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, metadataFile), []byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n"), 0o644))
	followRecords(t, w, "old", 5)
	r, err := Open(vfs.OS, dir, Config{ReadOnly: true, RefreshInterval: time.Nanosecond}, false)
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, int64(5), r.EndOffset())

	require.NoError(t, w.Close())
	require.NoError(t, os.RemoveAll(dir))
	cfg.SegmentBytes = 300 // rolls: a listing unlike the old one
	w, err = Open(vfs.OS, dir, cfg, false)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, metadataFile), []byte("version: 0\ntopic_id: BBBBBBBBBBBBBBBBBBBBBB\n"), 0o644))
	followRecords(t, w, "new", 9)
	require.NoError(t, w.Close())

	require.Equal(t, int64(5), r.EndOffset(), "the old partition's end")
	b, err := r.ReadBatches(nil, 0, 1<<20)
	require.NoError(t, err)
	it := log.NewBatchIter(b)
	n := 0
	var d log.Decoder
	for it.Next() {
		ri, err := d.Iter(it.Batch(), it.Header())
		require.NoError(t, err)
		var rec log.Record
		for ri.Next(&rec) {
			require.Equal(t, fmt.Sprintf("old-%d", n), string(rec.Value))
			n++
		}
		require.NoError(t, ri.Err())
	}
	require.Equal(t, 5, n)
}
