package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/stratalog/strata"
	"github.com/stratalog/strata/topic"
)

func newTopicsAlterCmd(a *app) *cobra.Command {
	var (
		configs, deletes []string
		partitions       int
	)
	cmd := &cobra.Command{
		Use:   "alter NAME",
		Short: "Change a topic's configs, or add partitions",
		Long: `alter sets topic configs (--config name=value), puts them back to their
defaults (--delete-config name), or grows the topic to --partitions
partitions, and prints what changed. The configs that retention and the
cleaner read can change on an existing topic; the others are fixed when the
topic is created. Those that can change:
  ` + strings.Join(topic.LiveKafkaConfigNames(), "\n  "),
		Example: `  strata topics alter orders --config retention.ms=86400000
  strata topics alter orders --delete-config retention.ms
  strata topics alter orders --partitions 12`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if len(configs) == 0 && len(deletes) == 0 && !cmd.Flags().Changed("partitions") {
				return usagef("nothing to alter: give --config, --delete-config or --partitions")
			}
			names, values, err := parseConfigs(configs)
			if err != nil {
				return err
			}
			for _, n := range deletes {
				if !topic.IsKafkaConfig(n) {
					return topic.SetKafkaConfig(&strata.TopicConfig{}, n, "")
				}
				if slices.Contains(names, n) {
					return usagef("config %s is both set and deleted", n)
				}
			}
			s, err := a.openWrite()
			if err != nil {
				return err
			}
			defer s.Close()
			d, err := s.DescribeTopic(name)
			if err != nil {
				return err
			}
			old := d.Config
			cfg, err := alteredConfig(old, names, values, deletes)
			if err != nil {
				return err
			}
			changes := configChanges(old, cfg)
			if len(configs)+len(deletes) > 0 {
				if err := s.AlterTopicConfig(name, cfg); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("partitions") {
				if partitions != len(d.Partitions) {
					changes = append(changes, change{"partitions", fmt.Sprint(len(d.Partitions)), fmt.Sprint(partitions)})
				}
				if err := s.CreatePartitions(name, partitions); err != nil {
					return err
				}
			}
			if a.json() {
				return a.writeJSON(changes)
			}
			if len(changes) == 0 {
				fmt.Fprintf(a.stdout, "Topic %s: nothing changed.\n", name)
			}
			for _, c := range changes {
				fmt.Fprintf(a.stdout, "Topic %s: %s %s -> %s\n", name, c.Name, c.From, c.To)
			}
			return s.Close()
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&configs, "config", nil, "set a topic config, name=value (repeatable)")
	f.StringArrayVar(&deletes, "delete-config", nil, "put a topic config back to its default (repeatable)")
	f.IntVar(&partitions, "partitions", 0, "grow the topic to this many partitions")
	return cmd
}

// change is one config an alter changed.
type change struct {
	Name string `json:"name"`
	From string `json:"from"`
	To   string `json:"to"`
}

// alteredConfig returns old with the configs names set to values and
// deletes put back to their defaults, or why not: a config that may not
// change on an existing topic, named by its Kafka name.
func alteredConfig(old strata.TopicConfig, names, values, deletes []string) (strata.TopicConfig, error) {
	def, err := strata.TopicConfig{Partitions: old.Partitions}.WithDefaults()
	if err != nil {
		return old, err
	}
	defValues := topic.KafkaConfigs(def)
	for _, n := range deletes {
		v, ok := defValues[n]
		if !ok {
			v = "0" // a compression level: the codec's own
		}
		names, values = append(names, n), append(values, v)
	}
	cfg := old
	if err := topic.SetKafkaConfigs(&cfg, names, values); err != nil {
		return old, err
	}
	if _, err := topic.CheckChange(old, cfg); err != nil {
		var fixed []string
		for _, c := range configChanges(old, cfg) {
			one := old
			if topic.SetKafkaConfig(&one, c.Name, c.To) != nil {
				continue
			}
			if _, err := topic.CheckChange(old, one); err != nil {
				fixed = append(fixed, fmt.Sprintf("%s (%s to %s)", c.Name, c.From, c.To))
			}
		}
		if len(fixed) == 0 {
			return old, err
		}
		return old, fmt.Errorf("topic config %s cannot change on an existing topic: Strata fixes it when the topic is created: %w",
			strings.Join(fixed, ", "), strata.ErrInvalidConfig)
	}
	return cfg, nil
}

// configChanges lists the Kafka configs that differ between from and to.
func configChanges(from, to strata.TopicConfig) []change {
	was, now := topic.KafkaConfigs(from), topic.KafkaConfigs(to)
	out := []change{}
	for _, name := range slices.Sorted(maps.Keys(now)) {
		if now[name] != was[name] {
			out = append(out, change{name, was[name], now[name]})
		}
	}
	return out
}

func newTopicsDeleteCmd(a *app) *cobra.Command {
	var ifExists bool
	cmd := &cobra.Command{
		Use:   "delete NAME...",
		Short: "Delete topics and their records",
		Long: `delete deletes the topics named, their records and the offsets groups
committed for them. The store's own topics (__consumer_offsets) cannot be
deleted.`,
		Example: `  strata topics delete orders
  strata topics delete orders payments --if-exists`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			s, err := a.openWrite()
			if err != nil {
				return err
			}
			defer s.Close()
			// Every name is checked first, so that a bad one deletes none.
			for _, name := range names {
				if _, err := s.DescribeTopic(name); err != nil && !(ifExists && errors.Is(err, strata.ErrUnknownTopic)) {
					return err
				}
			}
			var deleted []string
			for _, name := range names {
				err := s.DeleteTopic(name)
				if ifExists && errors.Is(err, strata.ErrUnknownTopic) {
					continue
				} else if err != nil {
					return err
				}
				deleted = append(deleted, name)
				if !a.json() {
					fmt.Fprintf(a.stdout, "Deleted topic %s.\n", name)
				}
			}
			if a.json() {
				if deleted == nil {
					deleted = []string{}
				}
				if err := a.writeJSON(map[string][]string{"deleted": deleted}); err != nil {
					return err
				}
			}
			return s.Close()
		},
	}
	cmd.Flags().BoolVar(&ifExists, "if-exists", false, "succeed for a topic that does not exist")
	return cmd
}
