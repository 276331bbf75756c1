package watermill_test

import (
	"os"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"
	"github.com/stratalog/strata"
	"github.com/stretchr/testify/require"

	stratawm "github.com/stratalog/strata/watermill"
)

// suitePartitions is the partition count of the topics the suite's runs
// create (watermill-kafka's run creates 50).
const suitePartitions = 8

// openStore opens a store in a temporary directory, closed when t ends
// (after its parallel subtests).
func openStore(t testing.TB) *strata.Store {
	t.Helper()
	st, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	return st
}

// constructors returns the suite's constructors of Publishers and
// Subscribers over st: every one shares the store, as the instances of a
// service share a Kafka cluster. group is the group of the plain
// constructor ("" for none).
func constructors(st *strata.Store, marshaler stratawm.MarshalerUnmarshaler, group string) (tests.PubSubConstructor, tests.ConsumerGroupPubSubConstructor) {
	withGroup := func(t *testing.T, g string) (message.Publisher, message.Subscriber) {
		topic := strata.TopicConfig{Partitions: suitePartitions}
		pub, err := stratawm.NewPublisher(st, stratawm.PublisherConfig{Marshaler: marshaler, Topic: topic}, nil)
		require.NoError(t, err)
		sub, err := stratawm.NewSubscriber(st, stratawm.SubscriberConfig{
			ConsumerGroup:   g,
			Unmarshaler:     marshaler,
			Topic:           topic,
			NackResendSleep: 10 * time.Millisecond,
		}, nil)
		require.NoError(t, err)
		return pub, sub
	}
	return func(t *testing.T) (message.Publisher, message.Subscriber) { return withGroup(t, group) }, withGroup
}

func partitionKey(_ string, msg *message.Message) (string, error) {
	return msg.Metadata.Get("partition_key"), nil
}

// TestPubSub runs Watermill's universal suite with consumer groups, as
// watermill-kafka's first run does.
func TestPubSub(t *testing.T) {
	t.Parallel()
	pubSub, withGroup := constructors(openStore(t), stratawm.DefaultMarshaler{}, "test")
	tests.TestPubSub(t, tests.Features{
		ConsumerGroups: true,
		Persistent:     true,
	}, pubSub, withGroup)
}

// TestPubSubOrdered runs the suite with GuaranteedOrder: the partitioning
// marshaler keys every message by its "partition_key" metadata, which the
// suite leaves empty, so a topic's messages share one partition.
func TestPubSubOrdered(t *testing.T) {
	t.Parallel()
	pubSub, withGroup := constructors(openStore(t), stratawm.NewWithPartitioningMarshaler(partitionKey), "test")
	tests.TestPubSub(t, tests.Features{
		ConsumerGroups:  true,
		Persistent:      true,
		GuaranteedOrder: true,
	}, pubSub, withGroup)
}

// TestPubSubNoGroup runs the suite with subscriptions that join no group:
// each reads every message from the earliest.
func TestPubSubNoGroup(t *testing.T) {
	t.Parallel()
	pubSub, _ := constructors(openStore(t), stratawm.DefaultMarshaler{}, "")
	tests.TestPubSub(t, tests.Features{
		Persistent:                       true,
		NewSubscriberReceivesOldMessages: true,
	}, pubSub, nil)
}

// stressCount is how many copies of the suite TestPubSubStress runs at
// once, unless STRESS_TEST_COUNT says otherwise (the suite's default is
// 10: this machine's budget for the module's tests under -race is a few
// minutes).
const stressCount = "5"

func TestMain(m *testing.M) {
	if os.Getenv("STRESS_TEST_COUNT") == "" {
		os.Setenv("STRESS_TEST_COUNT", stressCount)
	}
	os.Exit(m.Run())
}

// TestPubSubStress runs the suite's stress test: TestPubSub (with groups)
// STRESS_TEST_COUNT times at once, on one store.
func TestPubSubStress(t *testing.T) {
	t.Parallel()
	pubSub, withGroup := constructors(openStore(t), stratawm.DefaultMarshaler{}, "test")
	tests.TestPubSubStressTest(t, tests.Features{
		ConsumerGroups: true,
		Persistent:     true,
	}, pubSub, withGroup)
}
