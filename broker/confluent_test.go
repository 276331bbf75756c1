package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// lookConfluent returns a Python interpreter that imports confluent_kafka:
// $STRATA_PYTHON, or the first of python3 on the PATH and /usr/bin/python3
// (where Debian's python3-confluent-kafka is, when the PATH's python3 is
// another one). Without one the test skips, unless
// STRATA_REQUIRE_CONFLUENT_KAFKA=1 (which CI sets) makes that a failure.
func lookConfluent(t *testing.T) string {
	candidates := []string{"python3", "/usr/bin/python3"}
	if p := os.Getenv("STRATA_PYTHON"); p != "" {
		candidates = []string{p}
	}
	for _, c := range candidates {
		path, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import confluent_kafka").Run() == nil {
			return path
		}
	}
	if os.Getenv("STRATA_REQUIRE_CONFLUENT_KAFKA") == "1" {
		t.Fatalf("no python3 in %v imports confluent_kafka (apt-get install python3-confluent-kafka)", candidates)
	}
	t.Skipf("no python3 in %v imports confluent_kafka (apt-get install python3-confluent-kafka)", candidates)
	return ""
}

// runConfluent runs testdata/confluent.py's command against addr and
// decodes the JSON it prints into out.
func runConfluent(t *testing.T, python, addr string, out any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{"testdata/confluent.py", addr}, args...)...)
	stdout, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "confluent.py %v: %s", args, stderr)
	require.NoError(t, json.Unmarshal(stdout, out), "confluent.py %v printed %q", args, stdout)
}

type pyRecord struct {
	P  int    `json:"p"`
	O  int64  `json:"o"`
	K  string `json:"k"`
	V  string `json:"v"`
	TS int64  `json:"ts"`
}

// storedFrom reads topic's records from offset on in every partition from
// the store, as confluent.py reports them, partition by partition.
func storedFrom(t *testing.T, s *strata.Store, topic string, parts int, from func(p int) int64) []pyRecord {
	t.Helper()
	var out []pyRecord
	for p := range parts {
		recs, err := s.Read(context.Background(), topic, p, from(p), 1<<20)
		require.NoError(t, err)
		for _, r := range recs {
			out = append(out, pyRecord{P: p, O: r.Offset, K: string(r.Key), V: string(r.Value), TS: r.Timestamp.UnixMilli()})
		}
	}
	return out
}

// byPartition orders records by partition and offset (a consumer
// interleaves its partitions).
func byPartition(recs []pyRecord) []pyRecord {
	sort.SliceStable(recs, func(i, j int) bool {
		if recs[i].P != recs[j].P {
			return recs[i].P < recs[j].P
		}
		return recs[i].O < recs[j].O
	})
	return recs
}

// TestConfluentKafka drives Debian's python3-confluent-kafka (librdkafka)
// against the listener and checks each step from the store's side: the
// admin client's create_topics and delete_topics; an idempotent producer
// in each codec, placing keys with partitioner=murmur2_random where
// Store.PartitionFor says, its batches stored in that codec with a
// producer id; a consumer's assign() from an offset and from a time
// (offsets_for_times); and list_topics.
func TestConfluentKafka(t *testing.T) {
	python := lookConfluent(t)
	s, srv := serve(t, nil)
	addr := srv.Addr().String()
	const parts, count = 3, 300

	codecs := []struct {
		name string
		want log.Compression
	}{
		{"none", log.None},
		{"gzip", log.Gzip},
		{"snappy", log.Snappy},
		{"lz4", log.LZ4},
		{"zstd", log.Zstd},
	}
	for _, c := range codecs {
		var created struct{ Errors map[string]*string }
		topic := "py-" + c.name
		runConfluent(t, python, addr, &created, "create", topic, strconv.Itoa(parts), "retention.ms=3600000")
		require.Equal(t, map[string]*string{topic: nil}, created.Errors)
		d, err := s.DescribeTopic(topic)
		require.NoError(t, err)
		require.Len(t, d.Partitions, parts)
		require.Equal(t, time.Hour, d.Config.Retention)
	}
	var again struct{ Errors map[string]*string }
	runConfluent(t, python, addr, &again, "create", "py-none", "1")
	require.NotNil(t, again.Errors["py-none"])
	require.Equal(t, "TOPIC_ALREADY_EXISTS", *again.Errors["py-none"])

	base := time.Now().Add(-time.Hour).UnixMilli()
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			topic := "py-" + c.name
			var produced struct{ Delivered []pyRecord }
			runConfluent(t, python, addr, &produced, "produce", topic, c.name, strconv.Itoa(count), strconv.FormatInt(base, 10))
			require.Len(t, produced.Delivered, count)
			for _, d := range produced.Delivered {
				want, err := s.PartitionFor(topic, []byte(d.K))
				require.NoError(t, err)
				require.Equal(t, want, d.P, "key %q", d.K)
			}

			// From the store: every partition's batches in the codec, from
			// an idempotent producer; every record in its key's partition,
			// where its delivery report said.
			used := 0
			for p := range parts {
				b, err := s.View(strata.ReadUncommitted).ReadBatches(topic, p, 0, 1<<20, nil)
				require.NoError(t, err)
				if len(b) > 0 {
					used++
				}
				for len(b) > 0 {
					h, err := log.ReadHeader(b)
					require.NoError(t, err)
					require.Equal(t, c.want, h.Compression(), "partition %d batch at %d", p, h.BaseOffset)
					require.GreaterOrEqual(t, h.ProducerID, int64(0), "idempotent")
					b = b[h.Size():]
				}
			}
			require.Greater(t, used, 1, "13 keys over %d partitions", parts)
			stored := storedFrom(t, s, topic, parts, func(int) int64 { return 0 })
			require.Len(t, stored, count)
			at := map[[2]int64]string{}
			for _, r := range stored {
				want, err := s.PartitionFor(topic, []byte(r.K))
				require.NoError(t, err)
				require.Equal(t, want, r.P, "key %q", r.K)
				at[[2]int64{int64(r.P), r.O}] = r.K
			}
			for _, d := range produced.Delivered {
				require.Equal(t, d.K, at[[2]int64{int64(d.P), d.O}], "delivered at %d/%d", d.P, d.O)
			}

			// Back through assign(): from offset 5, and from the time of
			// the record produced at base+150.
			at150 := base + 150
			var consumed struct {
				FromOffset  []pyRecord       `json:"from_offset"`
				TimeOffsets map[string]int64 `json:"time_offsets"`
				FromTime    []pyRecord       `json:"from_time"`
			}
			runConfluent(t, python, addr, &consumed, "consume", topic, "5", strconv.FormatInt(at150, 10))
			require.Equal(t, storedFrom(t, s, topic, parts, func(int) int64 { return 5 }), byPartition(consumed.FromOffset))
			timeOffsets := map[string]int64{}
			for p := range parts {
				off, err := s.ListOffsets(topic, p, strata.AtTime(time.UnixMilli(at150)))
				require.NoError(t, err)
				timeOffsets[strconv.Itoa(p)] = off
			}
			require.Equal(t, timeOffsets, consumed.TimeOffsets)
			fromTime := storedFrom(t, s, topic, parts, func(p int) int64 { return timeOffsets[strconv.Itoa(p)] })
			require.Equal(t, fromTime, byPartition(consumed.FromTime))
			require.Len(t, fromTime, count-150, "the records from base+150 on")
			for _, r := range fromTime {
				require.GreaterOrEqual(t, r.TS, at150)
			}
		})
	}

	var md struct {
		Brokers    map[string]string
		Controller int
		Topics     map[string]struct {
			Error      *string
			Partitions map[string]struct {
				Leader   int
				Replicas []int
				Isrs     []int
			}
		}
	}
	runConfluent(t, python, addr, &md, "metadata")
	require.Equal(t, map[string]string{"0": addr}, md.Brokers)
	require.Equal(t, 0, md.Controller)
	var names []string
	for name, tm := range md.Topics {
		names = append(names, name)
		require.Nil(t, tm.Error, name)
		if name == strata.ConsumerOffsetsTopic {
			continue // the store's, of one partition, created at the consumers' FindCoordinator
		}
		require.Len(t, tm.Partitions, parts, name)
		for p := range parts {
			pm := tm.Partitions[strconv.Itoa(p)]
			require.Equal(t, 0, pm.Leader, "%s/%d", name, p)
			require.Equal(t, []int{0}, pm.Replicas, "%s/%d", name, p)
			require.Equal(t, []int{0}, pm.Isrs, "%s/%d", name, p)
		}
	}
	sort.Strings(names)
	want := append([]string{strata.ConsumerOffsetsTopic}, s.Topics()...)
	sort.Strings(want)
	require.Equal(t, want, names, "every topic, the internal one included, as Kafka lists them")

	var deleted struct{ Errors map[string]*string }
	runConfluent(t, python, addr, &deleted, "delete", "py-none", "py-gzip")
	require.Equal(t, map[string]*string{"py-none": nil, "py-gzip": nil}, deleted.Errors)
	_, err := s.DescribeTopic("py-none")
	require.ErrorIs(t, err, strata.ErrUnknownTopic)
	require.Equal(t, []string{"py-lz4", "py-snappy", "py-zstd"}, s.Topics())
	runConfluent(t, python, addr, &deleted, "delete", "py-none")
	require.NotNil(t, deleted.Errors["py-none"])
	require.Equal(t, "UNKNOWN_TOPIC_OR_PART", *deleted.Errors["py-none"], fmt.Sprint(deleted.Errors))
}
