package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// lookKcat returns kcat's path, skipping the test without it unless
// STRATA_REQUIRE_KCAT=1 (which CI sets) makes that a failure.
func lookKcat(t *testing.T) string {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("STRATA_REQUIRE_KCAT") == "1" {
			t.Fatal("kcat is not installed (apt-get install kcat)")
		}
		t.Skip("kcat is not installed")
	}
	return kcat
}

func runKcat(t *testing.T, kcat, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "kcat %s: %s", strings.Join(args, " "), stderr)
	return string(out)
}

// server is a strata serve subprocess.
type server struct {
	cmd          *exec.Cmd
	kafka, httpm string // the addresses it logged
	stderr       chan string
	exited       chan error
}

// startServe runs strata serve on dir on free ports (the strata on PATH is
// this test binary, testscript.Main's copy) and waits for its listeners'
// lines on stderr.
func startServe(t *testing.T, dir string, args ...string) *server {
	t.Helper()
	cmd := exec.Command("strata", append([]string{"--dir", dir, "serve", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"}, args...)...)
	pipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	s := &server{cmd: cmd, stderr: make(chan string, 100), exited: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			s.stderr <- sc.Text()
		}
		close(s.stderr)
		s.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	deadline := time.After(30 * time.Second)
	for s.kafka == "" || s.httpm == "" {
		select {
		case line, ok := <-s.stderr:
			require.True(t, ok, "strata serve exited before serving")
			if a, ok := strings.CutPrefix(line, "serving Kafka on "); ok {
				s.kafka = a
			} else if a, ok := strings.CutPrefix(line, "metrics on "); ok {
				s.httpm = a
			} else {
				t.Logf("strata serve: %s", line)
			}
		case <-deadline:
			t.Fatal("strata serve did not log its listeners within 30s")
		}
	}
	return s
}

// stop sends sig and returns the exit status and the rest of stderr.
func (s *server) stop(t *testing.T, sig os.Signal) (int, string) {
	t.Helper()
	require.NoError(t, s.cmd.Process.Signal(sig))
	var rest []string
	for line := range s.stderr {
		rest = append(rest, line)
	}
	select {
	case err := <-s.exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), strings.Join(rest, "\n")
		}
		require.NoError(t, err)
		return 0, strings.Join(rest, "\n")
	case <-time.After(30 * time.Second):
		t.Fatal("strata serve did not exit within 30s of the signal")
		return -1, ""
	}
}

// scrape returns the value of each strata_ sample of /metrics, by its
// name and labels as the text format writes them.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := map[string]float64{}
	for line := range strings.Lines(string(body)) {
		if !strings.HasPrefix(line, "strata_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(strings.TrimSpace(line[i+1:]), 64)
		require.NoError(t, err, line)
		out[line[:i]] = v
	}
	require.Contains(t, string(body), "go_goroutines", "the Go runtime's metrics too")
	return out
}

// TestServeKcat runs strata serve and kcat against it: metadata, produce,
// consume, a consumer group; checks the figures of /metrics; then SIGTERM
// stops it with status 0 and the directory reopens clean.
func TestServeKcat(t *testing.T) {
	kcat := lookKcat(t)
	dir := filepath.Join(t.TempDir(), "data")
	srv := startServe(t, dir, "--auto-create-topics", "--sync", "always")
	b := srv.kafka

	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprintf("k%d:value %d", i%7, i))
	}
	input := strings.Join(lines, "\n") + "\n"
	runKcat(t, kcat, input, "-P", "-b", b, "-t", "orders", "-p", "0", "-K", ":", "-X", "linger.ms=20")
	out := runKcat(t, kcat, "", "-C", "-b", b, "-t", "orders", "-o", "beginning", "-e", "-q", "-f", "%k:%s\n")
	require.Equal(t, input, out)
	out = runKcat(t, kcat, "", "-L", "-b", b)
	require.Contains(t, out, `topic "orders" with 1 partitions`)
	require.Contains(t, out, "broker 0 at "+b)

	m := scrape(t, srv.httpm)
	p := `{partition="0",topic="orders"}`
	require.Equal(t, 100.0, m["strata_partition_appended_records_total"+p])
	require.Equal(t, 100.0, m["strata_partition_log_end_offset"+p])
	require.Equal(t, 0.0, m["strata_partition_log_start_offset"+p])
	require.Equal(t, 1.0, m["strata_partition_segments"+p])
	require.Positive(t, m["strata_partition_appended_batches_total"+p])
	require.Equal(t, m["strata_partition_appended_bytes_total"+p], m["strata_partition_size_bytes"+p])
	require.Positive(t, m["strata_partition_fsyncs_total"+p], "--sync always")
	require.Positive(t, m["strata_partition_fetches_total"+p], "kcat's Fetches are counted")
	require.GreaterOrEqual(t, m["strata_partition_fetched_bytes_total"+p], m["strata_partition_size_bytes"+p])

	// A consumer group: kcat -G consumes and commits what it read.
	runKcat(t, kcat, "", "-b", b, "-G", "billing", "-X", "auto.offset.reset=earliest", "-e", "-q", "orders")
	g := `{group="billing",partition="0",topic="orders"}`
	m = scrape(t, srv.httpm)
	require.Equal(t, 100.0, m["strata_group_committed_offset"+g])
	require.Equal(t, 0.0, m["strata_group_lag"+g])
	require.Equal(t, 0.0, m["strata_group_oldest_unconsumed_age_seconds"+g])
	// Five records more: the group lags by five, and the oldest of them
	// ages (by the wall clock: poll until a millisecond has passed).
	runKcat(t, kcat, "a\nb\nc\nd\ne\n", "-P", "-b", b, "-t", "orders", "-p", "0")
	m = scrape(t, srv.httpm)
	require.Equal(t, 105.0, m["strata_partition_log_end_offset"+p])
	require.Equal(t, 5.0, m["strata_group_lag"+g])
	require.Equal(t, 100.0, m["strata_group_committed_offset"+g])
	for deadline := time.Now().Add(10 * time.Second); m["strata_group_oldest_unconsumed_age_seconds"+g] <= 0; {
		require.True(t, time.Now().Before(deadline), "the oldest unconsumed record's age stays 0")
		m = scrape(t, srv.httpm)
	}
	require.Less(t, m["strata_group_oldest_unconsumed_age_seconds"+g], 60.0)

	code, rest := srv.stop(t, syscall.SIGTERM)
	require.Equal(t, 0, code, rest)
	require.FileExists(t, filepath.Join(dir, ".clean-shutdown"), "Close wrote the clean-shutdown marker")
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	end, err := s.ListOffsets("orders", 0, strata.Latest)
	require.NoError(t, err)
	require.Equal(t, int64(105), end)
	om, ok := s.Committed("billing", "orders", 0)
	require.True(t, ok)
	require.Equal(t, int64(100), om.Offset)
}

// TestServeBackgroundRetention: strata serve runs the store's retention in
// the background (--retention-check-interval): a topic whose records are
// past its retention.ms loses them while it serves, as /metrics shows.
func TestServeBackgroundRetention(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s, err := strata.Open(dir, &strata.Options{RetentionCheckInterval: -1})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("old", strata.TopicConfig{Retention: time.Hour, SegmentBytes: 1024}))
	for i := range 30 {
		_, err := s.AppendTo(context.Background(), "old", 0, strata.Record{Value: fmt.Appendf(nil, "v%d", i), Timestamp: time.Now().Add(-2 * time.Hour)})
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())

	srv := startServe(t, dir, "--retention-check-interval", "10ms")
	p := `{partition="0",topic="old"}`
	for deadline := time.Now().Add(30 * time.Second); ; {
		m := scrape(t, srv.httpm)
		require.Equal(t, 30.0, m["strata_partition_log_end_offset"+p])
		if m["strata_partition_log_start_offset"+p] == 30 {
			require.Equal(t, 0.0, m["strata_partition_size_bytes"+p], "every expired segment deleted")
			break
		}
		require.True(t, time.Now().Before(deadline), "retention did not run within 30s: %v", m)
		time.Sleep(10 * time.Millisecond)
	}
	code, rest := srv.stop(t, syscall.SIGTERM)
	require.Equal(t, 0, code, rest)
}

// TestServeAdvertisedAddress: Metadata gives clients --advertised-address
// for the broker, not the address bound.
func TestServeAdvertisedAddress(t *testing.T) {
	kcat := lookKcat(t)
	srv := startServe(t, filepath.Join(t.TempDir(), "data"), "--advertised-address", "localhost:19092")
	out := runKcat(t, kcat, "", "-L", "-b", srv.kafka, "-m", "5")
	require.Contains(t, out, "broker 0 at localhost:19092")
	code, rest := srv.stop(t, syscall.SIGTERM)
	require.Equal(t, 0, code, rest)
}

// TestServePortTaken: a --listen address in use fails (status 1) with the
// reason, and the directory is closed cleanly again.
func TestServePortTaken(t *testing.T) {
	srv := startServe(t, filepath.Join(t.TempDir(), "data"))
	other := filepath.Join(t.TempDir(), "other")
	out, err := exec.Command("strata", "--dir", other, "serve", "--listen", srv.kafka).CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 1, ee.ExitCode(), "%s", out)
	require.Regexp(t, `^strata: broker: listen tcp `+srv.kafka+`: bind: address already in use\n$`, string(out))
	require.FileExists(t, filepath.Join(other, ".clean-shutdown"))
	code, rest := srv.stop(t, syscall.SIGTERM)
	require.Equal(t, 0, code, rest)
}
