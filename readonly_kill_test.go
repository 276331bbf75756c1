package strata_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// roKillEnv names the directory of TestReadOnlyOwnerKilled's writer child.
const roKillEnv = "STRATA_RO_KILL_STORE"

// killValue is the value the writer child appends at off: its offset
// and, for some offsets, enough bytes that the batch is written with
// pwrite rather than copied into the mapping.
func killValue(off int64) string {
	v := fmt.Sprintf("value-%d;", off)
	if off%7 == 3 {
		v += strings.Repeat("x", 6000+int(off%5)*1000)
	}
	return v
}

// TestReadOnlyOwnerKilled: the owner is killed (SIGKILL) while it appends
// batches small and large; a reader in this process reads every record it
// published and no other, without an error; the next owner's recovery
// keeps every record the reader read, and the reader follows what that
// owner appends.
func TestReadOnlyOwnerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	ctx := context.Background()
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{SegmentBytes: 256 << 10}))
	require.NoError(t, s.Close())

	cmd := exec.Command(os.Args[0], "-test.run=^TestReadOnlyOwnerKilledWriter$")
	cmd.Env = append(os.Environ(), roKillEnv+"="+dir)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	r, err := strata.Open(dir, &strata.Options{ReadOnly: true, RefreshInterval: time.Millisecond})
	require.NoError(t, err)
	defer r.Close()
	var next int64
	// readOnce reads what one Read returns and says whether it was
	// anything; read reads until it is not (while the owner is alive it
	// may append faster than this reads: a loop of readOnce instead).
	readOnce := func() bool {
		t.Helper()
		recs, err := r.Read(ctx, "t", 0, next, 500)
		require.NoError(t, err, "read at %d", next)
		for _, rec := range recs {
			require.Equal(t, next, rec.Offset)
			require.Equal(t, killValue(next), string(rec.Value), "offset %d", next)
			next++
		}
		return len(recs) > 0
	}
	read := func() {
		t.Helper()
		for readOnce() {
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for next < 3000 {
		require.True(t, time.Now().Before(deadline), "the reader read %d records in 30 s:\n%s", next, out.String())
		readOnce()
	}
	require.NoError(t, cmd.Process.Kill())
	killed = true
	_ = cmd.Wait()
	read()
	seen := next
	t.Logf("%d records read before and after the kill", seen)

	w, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever, Logger: logOnFailure(t)})
	require.NoError(t, err)
	defer w.Close()
	end, err := w.ListOffsets("t", 0, strata.Latest)
	require.NoError(t, err)
	require.GreaterOrEqual(t, end, seen, "recovery kept every record the reader read")
	for off := end; off < end+50; off++ {
		_, err := w.AppendTo(ctx, "t", 0, strata.Record{Value: []byte(killValue(off))})
		require.NoError(t, err)
	}
	read()
	require.Equal(t, end+50, next, "the reader follows the next owner")
}

// TestReadOnlyOwnerKilledWriter is TestReadOnlyOwnerKilled's writer: it
// appends until it is killed.
func TestReadOnlyOwnerKilledWriter(t *testing.T) {
	dir := os.Getenv(roKillEnv)
	if dir == "" {
		t.Skip("a child of TestReadOnlyOwnerKilled")
	}
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var off int64
	for {
		k := 1 + rand.IntN(6)
		recs := make([]strata.Record, k)
		for j := range recs {
			recs[j] = strata.Record{Value: []byte(killValue(off + int64(j)))}
		}
		if _, err := s.AppendTo(ctx, "t", 0, recs...); err != nil {
			t.Fatal(err)
		}
		off += int64(k)
	}
}
