package peers

import (
	"github.com/twmb/franz-go/pkg/kfake"
)

func init() {
	register(Peer{
		Name:     "kfake",
		Open:     openKfake,
		InMemory: true,
		Note: "franz-go's kfake, an in-memory Kafka of one broker started in Open (W7 pays for it), " +
			"driven over loopback TCP by franz-go's kgo: ProduceSync with linger 0 and no compression " +
			"(acks=all, idempotent when durable, else acks=1), Scan with kgo's consumer, Get a Fetch request",
	})
}

// openKfake starts a kfake cluster of one broker with the topic and
// connects to it; dir is not used, kfake keeps its records in memory.
func openKfake(dir string, o Options) (Log, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, kgoTopic))
	if err != nil {
		return nil, err
	}
	return openKgo(c.ListenAddrs()[0], o, func() error { c.Close(); return nil })
}
