package compat

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata/log"
)

// kcatLines is what kcat is given to produce: key:value lines, some with
// an empty key or value (which kcat sends as empty, not null).
func kcatLines(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		key, value := fmt.Sprintf("order-%04d", i%40), fmt.Sprintf(`{"order":%d,"status":"paid","amount":%d.%02d}`, i, i*37%1000, i%100)
		switch i % 5 {
		case 1:
			key = ""
		case 2:
			value = ""
		}
		lines[i] = key + ":" + value
	}
	return lines
}

// captureKcat runs kcat (librdkafka) against a kfake cluster, producing
// lines to partition 0 of topic t with codec and the extra librdkafka
// properties, and returns the record batches of its produce requests as
// they came over the wire.
func captureKcat(t *testing.T, kcat, codec string, lines []string, props ...string) [][]byte {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	require.NoError(t, err)
	defer c.Close()
	// librdkafka infers what a broker supports from the versions it
	// advertises, and compresses with gzip, snappy and lz4 only for
	// brokers that also take the old versions of some requests, which
	// kfake does not advertise: claim them, keeping kfake's maximums (the
	// versions librdkafka then uses).
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	require.NoError(t, err)
	kresp, err := cl.Request(context.Background(), kmsg.NewPtrApiVersionsRequest())
	cl.Close()
	require.NoError(t, err)
	versions := kresp.(*kmsg.ApiVersionsResponse)
	for i := range versions.ApiKeys {
		versions.ApiKeys[i].MinVersion = 0
	}
	c.ControlKey(int16(kmsg.ApiVersions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := *versions
		resp.SetVersion(req.GetVersion())
		return &resp, nil, true
	})
	var mu sync.Mutex
	var batches [][]byte
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		for _, tp := range req.(*kmsg.ProduceRequest).Topics {
			for _, p := range tp.Partitions {
				it := log.NewBatchIter(p.Records)
				for it.Next() {
					batches = append(batches, bytes.Clone(it.Batch()))
				}
				if it.Err() != nil {
					batches = append(batches, bytes.Clone(p.Records[it.Pos():])) // the test fails on it below
				}
			}
		}
		return nil, nil, false // kfake answers it
	})
	args := []string{"-P", "-b", c.ListenAddrs()[0], "-t", "t", "-p", "0", "-K", ":", "-X", "compression.codec=" + codec,
		"-H", "trace=0123456789abcdef", "-X", "linger.ms=200", "-X", "batch.num.messages=100000"}
	for _, p := range props {
		args = append(args, "-X", p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, args...)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "kcat: %s", out)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, batches, "kcat produced nothing")
	return batches
}

// checkKcatBatches decodes batches in Strata and checks that they hold
// lines in order, compressed with want, each record with kcat's header.
func checkKcatBatches(t *testing.T, batches [][]byte, want log.Compression, lines []string) {
	t.Helper()
	var d log.Decoder
	var got []string
	for _, b := range batches {
		h, err := log.CheckBatch(b)
		require.NoError(t, err, "a batch librdkafka wrote")
		require.Equal(t, want, h.Compression())
		it, err := d.Iter(b, h)
		require.NoError(t, err)
		var r log.Record
		for it.Next(&r) {
			require.Len(t, r.Headers, 1)
			require.Equal(t, "trace", r.Headers[0].Key)
			require.Equal(t, "0123456789abcdef", string(r.Headers[0].Value))
			got = append(got, string(r.Key)+":"+string(r.Value))
		}
		require.NoError(t, it.Err())
	}
	require.Equal(t, lines, got)
}

// TestLibrdkafkaBatchesDecodeInStrata: batches librdkafka (through kcat)
// compresses with each codec decode in Strata record for record: the
// golden ones in testdata/librdkafka-*.batch, and, where kcat is installed,
// batches it makes now (-update writes them as the golden ones;
// STRATA_REQUIRE_KCAT=1, which CI sets, fails the test without kcat).
func TestLibrdkafkaBatchesDecodeInStrata(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil && os.Getenv("STRATA_REQUIRE_KCAT") != "" {
		t.Fatal("kcat is not installed (apt-get install kcat)")
	}
	lines := kcatLines(300)
	for _, c := range []struct {
		name  string
		codec log.Compression
		props []string
	}{
		{"gzip", log.Gzip, nil},
		{"snappy", log.Snappy, nil},
		{"lz4", log.LZ4, nil},
		{"zstd", log.Zstd, nil},
		{"lz4-idempotent", log.LZ4, []string{"enable.idempotence=true"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join("testdata", "librdkafka-"+c.name+".batch")
			if kcat != "" {
				batches := captureKcat(t, kcat, strings.TrimSuffix(c.name, "-idempotent"), lines, c.props...)
				checkKcatBatches(t, batches, c.codec, lines)
				if *update {
					require.NoError(t, os.WriteFile(path, bytes.Join(batches, nil), 0o644))
				}
			}
			golden, err := os.ReadFile(path)
			require.NoError(t, err)
			var batches [][]byte
			it := log.NewBatchIter(golden)
			for it.Next() {
				batches = append(batches, it.Batch())
			}
			require.NoError(t, it.Err())
			checkKcatBatches(t, batches, c.codec, lines)
			if c.props != nil {
				h, err := log.ReadHeader(batches[0])
				require.NoError(t, err)
				require.GreaterOrEqual(t, h.ProducerID, int64(0), "an idempotent producer's batch")
				require.Equal(t, int32(0), h.BaseSequence)
			}
		})
	}
}
