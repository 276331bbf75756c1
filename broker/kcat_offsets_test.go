package broker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// TestKcatOffsetsForTimes checks what librdkafka (Debian's, through kcat)
// gets from ListOffsets: kcat -Q's offset for a time, the latest (-1) and
// the earliest (-2), on a partition with records and an empty one, and a
// consume between two times (-o s@ and -o e@).
func TestKcatOffsetsForTimes(t *testing.T) {
	kcat := lookKcat(t)
	s, srv := serve(t, nil)
	addr := srv.Addr().String()
	require.NoError(t, s.CreateTopic("times", strata.TopicConfig{Partitions: 2}))
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	at := func(i int) int64 { return base.Add(time.Duration(i) * time.Second).UnixMilli() }
	var recs []strata.Record
	for i := range 10 {
		recs = append(recs, strata.Record{Value: fmt.Appendf(nil, "v%d", i), Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	_, err := s.AppendTo(context.Background(), "times", 0, recs...)
	require.NoError(t, err)

	for _, tt := range []struct {
		name string
		part int
		when int64
		want int64
	}{
		{"before the first record", 0, at(-1), 0},
		{"at a record", 0, at(3), 3},
		{"between two records", 0, at(3) + 500, 4},
		{"at the last record", 0, at(9), 9},
		{"after the last record", 0, at(3600), -1},
		{"latest", 0, -1, 10},
		{"earliest", 0, -2, 0},
		{"empty partition, by time", 1, at(3), -1},
		{"empty partition, latest", 1, -1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := runKcat(t, kcat, "", "-Q", "-b", addr, "-t", fmt.Sprintf("times:%d:%d", tt.part, tt.when))
			require.Equal(t, fmt.Sprintf("times [%d] offset %d\n", tt.part, tt.want), out)
		})
	}

	out := runKcat(t, kcat, "", "-C", "-b", addr, "-t", "times", "-p", "0",
		"-o", fmt.Sprintf("s@%d", at(5)), "-o", fmt.Sprintf("e@%d", at(8)), "-e", "-q", "-f", "%o:%s:%T\n")
	var want []string
	for i := 5; i < 8; i++ {
		want = append(want, fmt.Sprintf("%d:v%d:%d", i, i, at(i)))
	}
	require.Equal(t, strings.Join(want, "\n")+"\n", out)
}
