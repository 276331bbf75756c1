package broker_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/cputime"
)

// rawServerEnv names the server TestRawBenchServer serves in a process
// of its own: strata, kfake or sink.
const rawServerEnv = "STRATA_RAW_BENCH_SERVER"

// rawProfileEnv, when set, is a directory where each server process of
// the raw benchmarks writes its CPU profile, KIND.cpu.pprof (with
// -test.cpuprofile), when it stops.
const rawProfileEnv = "STRATA_RAW_BENCH_PROFILE"

// rawServer is a server of the raw benchmarks running in a process of its
// own (this test binary, running TestRawBenchServer), so that its CPU time
// is measured apart from the load generator's.
type rawServer struct {
	addr string
	in   io.WriteCloser
	out  *bufio.Scanner
}

// startRawServer starts a process serving kind (strata, kfake or sink)
// with benchTopic created, until owner ends.
func startRawServer(b *testing.B, owner testing.TB, kind string) *rawServer {
	args := []string{"-test.run=^TestRawBenchServer$"}
	if dir := os.Getenv(rawProfileEnv); dir != "" {
		args = append(args, "-test.cpuprofile="+filepath.Join(dir, kind+".cpu.pprof"))
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), rawServerEnv+"="+kind)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(b, err)
	out, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	s := &rawServer{in: in, out: bufio.NewScanner(out)}
	owner.Cleanup(func() {
		in.Close() // the server stops at the end of its input
		_ = cmd.Wait()
	})
	s.addr = s.line(b, "addr")
	return s
}

// line returns the value of the server's next line starting with word,
// skipping what else the test binary prints.
func (s *rawServer) line(b *testing.B, word string) string {
	for s.out.Scan() {
		if v, ok := strings.CutPrefix(s.out.Text(), word+" "); ok {
			return v
		}
	}
	b.Fatalf("raw server: no %s line: %v", word, s.out.Err())
	return ""
}

// cpu returns the CPU time (user and system) the server's process has
// used so far.
func (s *rawServer) cpu(b *testing.B) time.Duration {
	_, err := io.WriteString(s.in, "cpu\n")
	require.NoError(b, err)
	ns, err := strconv.ParseInt(s.line(b, "cpu"), 10, 64)
	require.NoError(b, err)
	return time.Duration(ns)
}

// TestRawBenchServer is the server process of the raw benchmarks (see
// startRawServer); run by itself, without rawServerEnv, it does nothing.
// It prints the address it serves on, answers each line "cpu" of its
// input with its process's CPU time in nanoseconds, and stops at the end
// of its input.
func TestRawBenchServer(t *testing.T) {
	var addr string
	switch kind := os.Getenv(rawServerEnv); kind {
	case "":
		t.Skip("the raw benchmarks' server process")
	case "strata":
		s, srv := serve(t, nil)
		require.NoError(t, s.CreateTopic(benchTopic, strata.TopicConfig{}))
		addr = srv.Addr().String()
	case "kfake":
		fake, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, benchTopic))
		require.NoError(t, err)
		t.Cleanup(fake.Close)
		addr = fake.ListenAddrs()[0]
	case "sink":
		addr = startSink(t)
	default:
		t.Fatalf("%s=%s: not strata, kfake or sink", rawServerEnv, kind)
	}
	fmt.Printf("\naddr %s\n", addr)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cpu, _ := cputime.Process()
		fmt.Printf("\ncpu %d\n", cpu.Nanoseconds())
	}
}
