package strata_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/segment"
)

// damageBatch flips the last byte of the k-th batch of the newest .log
// file of the partition directory dir (its CRC then fails) and returns the
// file and the batch's position.
func damageBatch(t *testing.T, dir string, k int) (string, int64) {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	require.NoError(t, err)
	require.NotEmpty(t, logs)
	path := logs[len(logs)-1]
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	var pos int64
	prefix := make([]byte, 12)
	for i := 0; ; i++ {
		_, err := f.ReadAt(prefix, pos)
		require.NoError(t, err, "batch %d of %s", i, path)
		size := 12 + int64(binary.BigEndian.Uint32(prefix[8:]))
		if i == k {
			b := []byte{0}
			_, err = f.ReadAt(b, pos+size-1)
			require.NoError(t, err)
			b[0] ^= 0xff
			_, err = f.WriteAt(b, pos+size-1)
			require.NoError(t, err)
			return path, pos
		}
		pos += size
	}
}

// TestReadOnlyDamageInTheMiddle: a batch of an active segment whose CRC
// fails, with valid batches after it, is damage to a read-only store, not
// the end of the log: a read that reaches it fails with ErrCorrupt naming
// the file and position (the records before it read), and so do the
// group calls when it is in __consumer_offsets.
func TestReadOnlyDamageInTheMiddle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever, Logger: logOnFailure(t)})
	require.NoError(t, err)
	require.NoError(t, w.CreateTopic("t", strata.TopicConfig{}))
	appendN(t, w, "t", 0, 20)
	for i := range 6 {
		require.NoError(t, w.Commit("g", "t", 0, int64(i+1), ""))
	}
	require.NoError(t, w.Close())

	logPath, logPos := damageBatch(t, filepath.Join(dir, "t-0"), 10)
	offPath, offPos := damageBatch(t, filepath.Join(dir, strata.ConsumerOffsetsTopic+"-0"), 2)
	before := dirImage(t, dir)

	r, err := strata.Open(dir, roOpts())
	require.NoError(t, err)
	defer r.Close()
	var next int64
	for {
		recs, err := r.Read(ctx, "t", 0, next, 100)
		if err != nil {
			require.ErrorIs(t, err, strata.ErrCorrupt)
			require.ErrorContains(t, err, fmt.Sprintf("%s at position %d", logPath, logPos))
			break
		}
		require.NotEmpty(t, recs, "read at %d: the end of the log, not the damage", next)
		for _, rec := range recs {
			require.Equal(t, next, rec.Offset)
			require.Equal(t, roValue(next), string(rec.Value))
			next++
		}
	}
	require.Equal(t, int64(10), next, "the records before the damage read")

	_, err = r.DescribeGroup(ctx, "g")
	require.ErrorIs(t, err, strata.ErrCorrupt)
	require.ErrorContains(t, err, fmt.Sprintf("%s at position %d", offPath, offPos))
	_, err = r.ListGroups()
	require.True(t, err == nil || errors.Is(err, strata.ErrCorrupt), "ListGroups: %v", err)
	require.NoError(t, r.Close())
	sameImage(t, before, dirImage(t, dir))
	if t.Failed() {
		t.Log(strings.Join([]string{logPath, offPath}, " "))
	}
}

// TestVerifyLiveDamageBeforeValidBatches: Verify of a live directory
// reports a bad batch of an active segment that valid batches follow as
// damage at once, without reading it again for segment.SettleWait as it
// does a bad last batch (which the owner may be copying in).
func TestVerifyLiveDamageBeforeValidBatches(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a live directory is told by /proc/locks")
	}
	dir := t.TempDir()
	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.CreateTopic("t", strata.TopicConfig{}))
	appendN(t, w, "t", 0, 20)
	path, pos := damageBatch(t, filepath.Join(dir, "t-0"), 10)
	start := time.Now()
	rep, err := strata.Verify(dir, &strata.VerifyOptions{Topic: "t"})
	took := time.Since(start)
	require.NoError(t, err)
	require.True(t, rep.Live)
	require.True(t, rep.Damaged(), "%+v", rep.Findings)
	found := false
	for _, f := range rep.Findings {
		found = found || f.Damage && f.File == path && f.Position == pos
	}
	require.True(t, found, "the damage at %s:%d in %+v", path, pos, rep.Findings)
	require.Less(t, took, segment.SettleWait/2, "Verify waited for bytes a valid batch follows")
}
