package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratalog/strata"
)

// childEnv makes the test binary run the program's main instead of the
// tests, so that TestInterrupt can signal a real process.
const childEnv = "STRATA_LISTENER_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestInterrupt runs the program with -auto-create on a directory, has
// kgo produce to a topic it does not know, interrupts the program with
// SIGINT, as Ctrl-C does, and checks that it exits 0 having closed the
// server and then the store: the directory is marked cleanly shut down
// and holds the record.
func TestInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-dir", dir, "-addr", "127.0.0.1:0", "-auto-create", "-partitions", "2")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	lines := bufio.NewScanner(stdout)
	var addr string
	for addr == "" && lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "serving Kafka clients on "); ok {
			addr = a
		}
	}
	require.NotEmpty(t, addr, "the address line")
	go func() {
		for lines.Scan() { // the rest, so that the child never blocks on a full pipe
		}
	}()

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "greetings", Value: []byte("hello")}).FirstErr())
	cl.Close()

	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.NoError(t, cmd.Wait(), "exit status")
	_, err = os.Stat(filepath.Join(dir, ".clean-shutdown"))
	require.NoError(t, err, "the store was closed")

	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	d, err := s.DescribeTopic("greetings")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 2)
	var n int64
	for _, p := range d.Partitions {
		n += p.EndOffset
	}
	require.Equal(t, int64(1), n)
}
