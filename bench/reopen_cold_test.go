package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stratalog/strata/bench/peers"
	"github.com/stratalog/strata/internal/cputime"
)

// reopenChildEnv names the peer and the directory a child process of
// BenchmarkReopenCold reopens ("strata=/path"); TestReopenChild does
// nothing without it.
const reopenChildEnv = "STRATA_BENCH_REOPEN_CHILD"

// BenchmarkReopenCold is the comparison's W6 with every reopen in a new
// process: each op starts this test binary again (TestReopenChild), whose
// only work is the peer's Open of the closed log of 1 M records (written
// as W2 writes it, 100 records per Append) and a point read of its last
// record, timed by the child itself. It reports the child's wall time
// (child-ns/op) and process CPU time (child-cpu-ns/op) of that Open and
// read, not the cost of starting a process: the first Open in a process,
// which pays what a warm BenchmarkReopen does not (first use of code and
// data, page faults in the binary). Strata beside bbolt, through the same
// peers the program runs, and on Linux the layout-floor baseline on
// Strata's log: the system calls and reads of these files alone, the
// least any Open of them and read of the last record costs.
func BenchmarkReopenCold(b *testing.B) {
	arena := readsArena(reopenRecords)
	for _, name := range []string{"strata", "bbolt"} {
		peer := findPeer(b, name)
		dir := filepath.Join(b.TempDir(), name)
		l, err := peer.Open(dir, peers.Options{})
		if err != nil {
			b.Fatal(err)
		}
		recs := make([]peers.Rec, readsBatch)
		for i := int64(0); i < reopenRecords; i += readsBatch {
			for j := range recs {
				recs[j].Key, recs[j].Value = readsRec(arena, i+int64(j))
			}
			if err := l.Append(recs); err != nil {
				b.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		b.Run("op=open+get/log="+name, func(b *testing.B) { reopenChildren(b, name, dir) })
		if name == "strata" && runtime.GOOS == "linux" {
			// The floor reopens what the strata peer wrote.
			b.Run("op=open+get/log=layout-floor", func(b *testing.B) { reopenChildren(b, "layout-floor", dir) })
		}
	}
}

// reopenChildren runs b.N children of name on dir and reports their mean
// wall and CPU time.
func reopenChildren(b *testing.B, name, dir string) {
	var wall, cpu time.Duration
	for range b.N {
		w, c := runReopenChild(b, name, dir)
		wall += w
		cpu += c
	}
	b.ReportMetric(float64(wall.Nanoseconds())/float64(b.N), "child-ns/op")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "child-cpu-ns/op")
}

// findPeer returns the registered peer called name.
func findPeer(b testing.TB, name string) peers.Peer {
	for _, p := range peers.All() {
		if p.Name == name {
			return p
		}
	}
	b.Fatalf("no peer %q", name)
	return peers.Peer{}
}

// runReopenChild runs TestReopenChild in a new process on the log of peer
// name in dir and returns the wall and CPU time it reports.
func runReopenChild(b *testing.B, name, dir string) (wall, cpu time.Duration) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestReopenChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), reopenChildEnv+"="+name+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("child: %v\n%s%s", err, out, stderr.Bytes())
	}
	for _, line := range strings.Split(string(out), "\n") {
		if _, err := fmt.Sscanf(line, "reopen wall=%d cpu=%d", &wall, &cpu); err == nil {
			return wall, cpu
		}
	}
	b.Fatalf("child printed no timing:\n%s%s", out, stderr.Bytes())
	return 0, 0
}

// TestReopenChild is BenchmarkReopenCold's child: it opens the log its
// environment names, reads its last record, checks it, and prints the
// time taken. Without the environment it does nothing.
func TestReopenChild(t *testing.T) {
	spec := os.Getenv(reopenChildEnv)
	if spec == "" {
		t.Skip("run by BenchmarkReopenCold")
	}
	name, dir, _ := strings.Cut(spec, "=")
	var peer peers.Peer
	for _, p := range peers.All() {
		if p.Name == name {
			peer = p
		}
	}
	if peer.Open == nil {
		t.Fatalf("no peer %q", name)
	}
	last := int64(reopenRecords - 1)
	var key, value []byte
	cpu0, _ := cputime.Process()
	start := time.Now()
	l, err := peer.Open(dir, peers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = l.Get(last, func(k, v []byte) { key, value = bytes.Clone(k), bytes.Clone(v) })
	wall := time.Since(start)
	cpu1, _ := cputime.Process()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 116)
	fillReadsRec(want, last)
	if k, v := readsRec(want, 0); !bytes.Equal(key, k) || !bytes.Equal(value, v) {
		t.Fatalf("record %d read back wrong", last)
	}
	fmt.Printf("reopen wall=%d cpu=%d\n", wall.Nanoseconds(), (cpu1 - cpu0).Nanoseconds())
}
