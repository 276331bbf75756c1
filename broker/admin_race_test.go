package broker_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
)

// TestAlterConfigsConcurrent alters two configs of one topic from two
// clients at once, each its own config, while a third grows the topic:
// every alter succeeds (none is refused for a partition count read before
// the topic grew), and neither client's value is ever lost to the other's
// change (each finds its own last value before its next change, and both
// are there at the end).
func TestAlterConfigsConcurrent(t *testing.T) {
	s, srv := serve(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm, _ := adminClient(t, srv)
	_, err := adm.CreateTopic(ctx, 1, 1, nil, "t")
	require.NoError(t, err)
	const rounds = 150
	// The clients are made here: adminClient fails the test, which only
	// the test's goroutine may do.
	adms := make([]*kadm.Client, 3)
	for i := range adms {
		adms[i], _ = adminClient(t, srv)
	}
	writer := func(adm *kadm.Client, config string, base int64) error {
		for i := int64(1); i <= rounds; i++ {
			if i > 1 {
				rc, err := adm.DescribeTopicConfigs(ctx, "t")
				if err != nil {
					return err
				}
				c, err := rc.On("t", nil)
				if err != nil {
					return err
				}
				found := false
				for _, kv := range c.Configs {
					if kv.Key != config {
						continue
					}
					found = true
					if kv.MaybeValue() != strconv.FormatInt(base+i-1, 10) {
						return fmt.Errorf("round %d: %s is %s, not the %d set before: another client's change put back an older value", i, config, kv.MaybeValue(), base+i-1)
					}
				}
				if !found {
					return fmt.Errorf("round %d: %s not described", i, config)
				}
			}
			v := strconv.FormatInt(base+i, 10)
			r, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: config, Value: &v}}, "t")
			if err != nil {
				return err
			}
			if r[0].Err != nil {
				return fmt.Errorf("round %d: setting %s: %w: %s", i, config, r[0].Err, r[0].ErrMessage)
			}
		}
		return nil
	}
	done := make(chan error, 3)
	go func() { done <- writer(adms[0], "retention.ms", 3_600_000) }()
	go func() { done <- writer(adms[1], "retention.bytes", 1<<30) }()
	go func() {
		adm := adms[2]
		for n := 2; n <= 40; n++ {
			r, err := adm.UpdatePartitions(ctx, n, "t")
			if err == nil {
				err = r.Error()
			}
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for range 3 {
		require.NoError(t, <-done)
	}
	d, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 40)
	require.Equal(t, time.Duration(3_600_000+rounds)*time.Millisecond, d.Config.Retention)
	require.Equal(t, int64(1<<30+rounds), d.Config.RetentionBytes)
}
