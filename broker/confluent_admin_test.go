package broker_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// runConfluentAdmin runs testdata/confluent_admin.py's command against
// addr and decodes the JSON it prints into out.
func runConfluentAdmin(t *testing.T, python, addr string, out any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{"testdata/confluent_admin.py", addr}, args...)...)
	stdout, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "confluent_admin.py %v: %s", args, stderr)
	require.NoError(t, json.Unmarshal(stdout, out), "confluent_admin.py %v printed %q", args, stdout)
}

type pyConfig struct {
	Value    *string  `json:"value"`
	Source   string   `json:"source"`
	ReadOnly bool     `json:"read_only"`
	Default  bool     `json:"default"`
	Synonyms []string `json:"synonyms"`
}

// TestConfluentAdmin grows a topic and alters and describes its configs
// with confluent-kafka's AdminClient (Debian's librdkafka 2.0.2), then
// produces with librdkafka's murmur2_random partitioner: the keys land
// where Strata hashes them over the new count.
func TestConfluentAdmin(t *testing.T) {
	python := lookConfluent(t)
	s, srv := serve(t, nil)
	addr := srv.Addr().String()
	require.NoError(t, s.CreateTopic("py-admin", strata.TopicConfig{Partitions: 2}))

	var res struct {
		Errors map[string]*string `json:"errors"`
	}
	runConfluentAdmin(t, python, addr, &res, "partitions", "py-admin", "4")
	require.Nil(t, res.Errors["py-admin"])
	d, err := s.DescribeTopic("py-admin")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 4)
	runConfluentAdmin(t, python, addr, &res, "partitions", "py-admin", "3")
	require.Equal(t, "INVALID_PARTITIONS", *res.Errors["py-admin"])

	runConfluentAdmin(t, python, addr, &res, "alter", "py-admin", "retention.ms=7200000", "retention.bytes=100000")
	require.Nil(t, res.Errors["py-admin"])
	d, err = s.DescribeTopic("py-admin")
	require.NoError(t, err)
	require.Equal(t, 2*time.Hour, d.Config.Retention)
	require.Equal(t, int64(100000), d.Config.RetentionBytes)
	runConfluentAdmin(t, python, addr, &res, "alter", "py-admin", "segment.bytes=1048576")
	require.Equal(t, "INVALID_CONFIG", *res.Errors["py-admin"])

	var desc struct {
		Configs map[string]pyConfig `json:"configs"`
	}
	runConfluentAdmin(t, python, addr, &desc, "describe", "topic", "py-admin")
	rm := desc.Configs["retention.ms"]
	require.Equal(t, "7200000", *rm.Value)
	require.Equal(t, "DYNAMIC_TOPIC_CONFIG", rm.Source)
	require.False(t, rm.ReadOnly)
	sb := desc.Configs["segment.bytes"]
	require.Equal(t, "DEFAULT_CONFIG", sb.Source)
	require.True(t, sb.ReadOnly, "fixed once the topic is created")
	runConfluentAdmin(t, python, addr, &desc, "describe", "broker", "0")
	require.Equal(t, "604800000", *desc.Configs["log.retention.ms"].Value)

	var produced struct {
		Delivered []pyRecord `json:"delivered"`
	}
	base := time.Now().UnixMilli()
	runConfluent(t, python, addr, &produced, "produce", "py-admin", "none", "100", strconv.FormatInt(base, 10))
	seen := map[int]bool{}
	for _, r := range produced.Delivered {
		p, err := s.PartitionFor("py-admin", []byte(r.K))
		require.NoError(t, err)
		require.Equal(t, p, r.P, "key %s", r.K)
		seen[r.P] = true
	}
	require.True(t, seen[2] || seen[3], "some keys land in the new partitions: %v", seen)
}
