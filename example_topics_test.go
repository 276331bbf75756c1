package strata_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/stratalog/strata"
)

// CreatePartitions grows a topic, as Kafka's CreatePartitions does: keys
// hash over the new count from then on, and the count never goes down.
func ExampleStore_CreatePartitions() {
	s, done := exampleStore(nil)
	defer done()
	if err := s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}); err != nil {
		panic(err)
	}
	before, _ := s.PartitionFor("orders", []byte("order-2"))
	if err := s.CreatePartitions("orders", 6); err != nil {
		panic(err)
	}
	after, _ := s.PartitionFor("orders", []byte("order-2"))
	d, _ := s.DescribeTopic("orders")
	fmt.Println(len(d.Partitions), "partitions; order-2 went to", before, "and now goes to", after)

	err := s.CreatePartitions("orders", 3)
	fmt.Println("fewer:", errors.Is(err, strata.ErrInvalidConfig))
	// Output:
	// 6 partitions; order-2 went to 1 and now goes to 3
	// fewer: true
}

// AlterTopicConfig changes the settings retention and the cleaner read,
// at once and durably; start from DescribeTopic's Config. The partitions'
// own settings are fixed when the topic is created.
func ExampleStore_AlterTopicConfig() {
	s, done := exampleStore(nil)
	defer done()
	if err := s.CreateTopic("audit", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	d, _ := s.DescribeTopic("audit")
	cfg := d.Config
	cfg.Retention = 30 * 24 * time.Hour
	if err := s.AlterTopicConfig("audit", cfg); err != nil {
		panic(err)
	}
	d, _ = s.DescribeTopic("audit")
	fmt.Println("retention:", d.Config.Retention)

	cfg.SegmentBytes = 1 << 20
	err := s.AlterTopicConfig("audit", cfg)
	fmt.Println("segment size:", errors.Is(err, strata.ErrInvalidConfig))
	// Output:
	// retention: 720h0m0s
	// segment size: true
}
