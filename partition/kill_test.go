package partition

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// killDirEnv names the partition directory of the child process of
// TestKill9; its presence makes TestKill9Child run.
const killDirEnv = "STRATA_KILL9_DIR"

// killConfig is the configuration both sides of TestKill9 use: real files,
// fsync before every acknowledgement, segments that roll every 64 KiB.
func killConfig() Config {
	return Config{SegmentBytes: 64 << 10, MaxBatchBytes: 16 << 10, Sync: SyncAlways}
}

// TestKill9 starts a child process (this test binary) that appends under
// SyncAlways and prints every acknowledged offset, kills it with SIGKILL
// once the parent has read a random number of those lines (the logged seed
// gives them), reopens the partition, and checks that every acknowledged
// record is there, intact, at its offset. It repeats for several rounds on
// the same directory.
func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 9))
	total := 0
	for round := range 8 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Child$", "-test.v")
		cmd.Env = append(os.Environ(), killDirEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())

		acked := make(chan []int64, 1)
		kill := 1 + r.IntN(300)
		reached := make(chan struct{})
		go func() {
			var offs []int64
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if rest, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
					off, err := strconv.ParseInt(rest, 10, 64)
					if err == nil {
						offs = append(offs, off)
						if len(offs) == kill {
							close(reached)
						}
					}
				}
			}
			_, _ = io.Copy(io.Discard, stdout)
			acked <- offs
		}()
		// Kill at the chosen acknowledgement, or after a while if it has
		// not come (a loaded machine may take that long to start the
		// child).
		select {
		case <-reached:
		case <-time.After(20 * time.Second):
		}
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		offs := <-acked
		total += len(offs)

		p, err := Open(vfs.OS, dir, killConfig(), false)
		require.NoError(t, err, "round %d", round)
		end := p.EndOffset()
		if len(offs) > 0 {
			require.Greater(t, end, offs[len(offs)-1], "round %d: the last acknowledged offset %d is gone", round, offs[len(offs)-1])
		}
		requireIDs(t, readRange(t, p, 0), 0, seq(0, int(end)))
		require.NoError(t, p.Close())
	}
	require.Greater(t, total, 8, "the children acknowledged appends")
	t.Logf("%d acknowledged appends over 8 kills", total)
}

// TestKill9Child is the child process of TestKill9: it appends until it is
// killed, printing "ack <offset>" after each Append returns.
func TestKill9Child(t *testing.T) {
	dir := os.Getenv(killDirEnv)
	if dir == "" {
		t.Skip("run by TestKill9")
	}
	p, err := Open(vfs.OS, dir, killConfig(), false)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		next := int(p.EndOffset())
		n := 1 + i%3
		recs := make([]log.Record, n)
		for j := range recs {
			recs[j] = rec(next + j)
		}
		off, err := p.Append(recs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		fmt.Fprintf(out, "ack %d\n", off+int64(n)-1)
		_ = out.Flush()
	}
}
