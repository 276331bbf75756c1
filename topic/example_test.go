package topic_test

import (
	"fmt"

	"github.com/stratalog/strata/topic"
)

func ExampleMurmur2() {
	h := topic.Murmur2([]byte("21"))
	fmt.Println(h, topic.ToPositive(h))
	// Output: -973932308 1173551340
}

func ExampleKeyPartition() {
	fmt.Println(topic.KeyPartition([]byte("foobar"), 10))
	fmt.Println(topic.KeyPartition([]byte{}, 1000)) // an empty key is a key
	fmt.Println(topic.KeyPartition(nil, 1000))      // no key: use a StickyPartitioner
	// Output:
	// 6
	// 681
	// -1
}

func ExampleStickyPartitioner() {
	const numPartitions = 6
	var sticky topic.StickyPartitioner

	partition := func(key []byte) int {
		if key == nil {
			return sticky.Partition(numPartitions)
		}
		return topic.KeyPartition(key, numPartitions)
	}

	first := partition(nil)
	fmt.Println("same batch, same partition:", partition(nil) == first)

	next := sticky.NextBatch(numPartitions) // the batch for first is full
	fmt.Println("new batch, other partition:", next != first, partition(nil) == next)
	fmt.Println("keyed records ignore it:", partition([]byte("foobar")))
	// Output:
	// same batch, same partition: true
	// new batch, other partition: true true
	// keyed records ignore it: 0
}

func ExampleSetKafkaConfig() {
	var c topic.Config
	for _, kv := range [][2]string{{"cleanup.policy", "compact"}, {"retention.ms", "-1"}, {"retention.ms", "soon"}} {
		if err := topic.SetKafkaConfig(&c, kv[0], kv[1]); err != nil {
			fmt.Println(err)
		}
	}
	full, _ := c.WithDefaults()
	configs := topic.KafkaConfigs(full)
	fmt.Println(c.CleanupPolicy, c.Retention, configs["retention.ms"], configs["segment.bytes"])
	// Output:
	// topic: config retention.ms="soon": the values are an integer number of milliseconds, at least -1 (-1: forever): partition: invalid config
	// compact -1ns -1 1073741824
}
