package mirror_test

import (
	"context"
	"fmt"
	"os"
	"regexp"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/mirror"
	"github.com/twmb/franz-go/pkg/kfake"
)

// Copy a store's topic and its consumer group to a Kafka cluster (here a
// kfake one) up to the current end, then show the per-partition progress.
func Example() {
	dir, _ := os.MkdirTemp("", "mirror-example")
	defer os.RemoveAll(dir)
	store, err := strata.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	ctx := context.Background()
	_ = store.CreateTopic("orders", strata.TopicConfig{Partitions: 2})
	for i := range 10 {
		_, _ = store.Append(ctx, "orders", strata.Record{Key: fmt.Appendf(nil, "customer-%d", i%3), Value: []byte("order")})
	}
	_ = store.Commit("billing", "orders", 0, 2, "")

	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		panic(err)
	}
	defer cluster.Close()

	m, err := mirror.New(store, mirror.Options{
		Brokers: cluster.ListenAddrs(),
		Topics:  []string{"orders"},
		Groups:  regexp.MustCompile(".*"),
	})
	if err != nil {
		panic(err)
	}
	if err := m.Once(ctx); err != nil {
		panic(err)
	}
	for _, l := range m.Lag() {
		fmt.Printf("%s/%d: source end %d, mirrored %d, lag %d\n", l.Topic, l.Partition, l.SourceEnd, l.Mirrored, l.Lag)
	}
	for _, g := range m.TranslateGroup("billing") {
		fmt.Printf("group %s %s/%d: offset %d on Strata is %d on Kafka\n", g.Group, g.TargetTopic, g.Partition, g.Source, g.Target)
	}
	// Output:
	// orders/0: source end 3, mirrored 3, lag 0
	// orders/1: source end 7, mirrored 7, lag 0
	// group billing orders/0: offset 2 on Strata is 2 on Kafka
}
