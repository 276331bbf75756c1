package broker_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
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

// TestKcat produces with Debian's librdkafka (through kcat) in each codec,
// idempotent or not, checks that the batches are stored in that codec (so
// librdkafka took the broker for one it may compress for), and consumes
// them back, from the start and from a time.
func TestKcat(t *testing.T) {
	kcat := lookKcat(t)
	s, srv := serve(t, nil)
	addr := srv.Addr().String()
	for _, tt := range []struct {
		codec string
		want  log.Compression
		props []string
	}{
		{"none", log.None, nil},
		{"gzip", log.Gzip, nil},
		{"snappy", log.Snappy, []string{"enable.idempotence=true"}},
		{"lz4", log.LZ4, nil},
		{"zstd", log.Zstd, []string{"enable.idempotence=true"}},
	} {
		t.Run(tt.codec, func(t *testing.T) {
			topic := "kcat-" + tt.codec
			require.NoError(t, s.CreateTopic(topic, strata.TopicConfig{}))
			var lines []string
			for i := range 200 {
				lines = append(lines, fmt.Sprintf("k%d:value %d value %d value %d", i%7, i, i, i))
			}
			input := strings.Join(lines, "\n") + "\n"
			args := []string{"-P", "-b", addr, "-t", topic, "-p", "0", "-K", ":", "-X", "compression.codec=" + tt.codec, "-X", "linger.ms=50"}
			for _, p := range tt.props {
				args = append(args, "-X", p)
			}
			before := time.Now().Add(-time.Second)
			runKcat(t, kcat, input, args...)

			b, err := s.View(strata.ReadUncommitted).ReadBatches(topic, 0, 0, 1<<20, nil)
			require.NoError(t, err)
			h, err := log.ReadHeader(b)
			require.NoError(t, err)
			require.Equal(t, tt.want, h.Compression())
			require.Equal(t, len(tt.props) > 0, h.ProducerID >= 0, "idempotent")

			out := runKcat(t, kcat, "", "-C", "-b", addr, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%k:%s\n")
			require.Equal(t, input, out)
			out = runKcat(t, kcat, "", "-C", "-b", addr, "-t", topic, "-o", fmt.Sprintf("s@%d", before.UnixMilli()), "-e", "-q", "-f", "%k:%s\n")
			require.Equal(t, input, out, "from a time before the first record")
		})
	}
	out := runKcat(t, kcat, "", "-L", "-b", addr)
	require.Contains(t, out, "topic \"kcat-zstd\" with 1 partitions")
	require.Contains(t, out, "broker 0 at "+addr)
}
