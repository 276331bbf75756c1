package main

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/topic"
)

func init() { commands = append(commands, newRebuildRegistryCmd) }

// rebuiltTopic is a topic rebuild-registry wrote into topics.json.
type rebuiltTopic struct {
	Name          string `json:"name"`
	Partitions    int    `json:"partitions"`
	CleanupPolicy string `json:"cleanup_policy"`
}

func newRebuildRegistryCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "rebuild-registry",
		Short: "Write topics.json from the partition directories (a lost registry, a Kafka broker's log directory)",
		Long: `rebuild-registry writes the directory's topic registry, topics.json, from its
partition directories (<topic>-<partition>), through strata.RebuildRegistry:
for a store whose topics.json was lost or damaged (Open refuses a damaged one;
the damaged file is kept as topics.json.damaged), or for a Kafka broker's
partition directories copied into an empty directory, which then open as a
store: consume, groups, verify --repair and serve work on them.

Each topic gets as many partitions as its highest-numbered directory says,
its id from partition.metadata, and the default configs, except that
retention is off (retention.ms -1: nothing is deleted) and a topic whose
directories hold a cleaner checkpoint is compacted. Set the configs again
with strata topics alter. A topics.json that reads fine is left alone
(status 2); a directory another process holds is refused (status 3).`,
		Example: `  mkdir /var/lib/copy && cp -r /var/lib/kafka/orders-* /var/lib/copy/
  strata --dir /var/lib/copy rebuild-registry
  strata --dir /var/lib/copy topics alter orders --config retention.ms=604800000
  strata --dir /var/lib/copy consume orders -n 10`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			dir, err := a.needDir()
			if err != nil {
				return err
			}
			if err := checkDir(dir); err != nil {
				return err
			}
			names, err := strata.RebuildRegistry(dir)
			if err != nil {
				return err
			}
			out, err := a.rebuilt(names)
			if err != nil {
				return err
			}
			if a.json() {
				return a.writeJSON(map[string]any{"topics": out})
			}
			tb := newTable(a.stdout, "TOPIC", "PARTITIONS", "CLEANUP-POLICY")
			for _, t := range out {
				tb.row(t.Name, t.Partitions, t.CleanupPolicy)
			}
			if err := tb.flush(); err != nil {
				return err
			}
			word := "topics"
			if len(out) == 1 {
				word = "topic"
			}
			_, err = fmt.Fprintf(a.stdout, "rebuilt topics.json with %d %s; retention is off (retention.ms -1): set the configs with strata topics alter\n", len(out), word)
			return err
		},
	}
}

// rebuilt describes the topics names that RebuildRegistry wrote, as the
// registry now has them.
func (a *app) rebuilt(names []string) ([]rebuiltTopic, error) {
	s, err := a.openRead()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	out := []rebuiltTopic{}
	for _, name := range slices.Sorted(slices.Values(names)) {
		d, err := s.DescribeTopic(name)
		if err != nil {
			return nil, err
		}
		out = append(out, rebuiltTopic{Name: name, Partitions: d.Config.Partitions, CleanupPolicy: topic.KafkaConfigs(d.Config)["cleanup.policy"]})
	}
	return out, nil
}
