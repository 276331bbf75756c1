package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/stratalog/strata"
	"github.com/stratalog/strata/topic"
)

func init() { commands = append(commands, newTopicsCmd) }

func newTopicsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topics",
		Short: "Create, list, describe, alter and delete topics (as kafka-topics)",
		Long: `topics manages the directory's topics, with Kafka's topic config names
(retention.ms, retention.bytes, cleanup.policy, segment.bytes,
compression.type, min.cleanable.dirty.ratio, ...).

list and describe only read: they work on a directory a running process holds.
create, alter and delete write: they refuse a directory another process holds.`,
		Example: `  strata topics create orders --partitions 3 --config retention.ms=86400000
  strata topics list
  strata topics describe orders
  strata topics alter orders --config retention.bytes=1073741824 --delete-config retention.ms
  strata topics delete orders`,
		Args: noArgs,
	}
	cmd.AddCommand(newTopicsCreateCmd(a), newTopicsListCmd(a), newTopicsDescribeCmd(a),
		newTopicsAlterCmd(a), newTopicsDeleteCmd(a))
	return cmd
}

// minArgs is cobra.MinimumNArgs with its error marked as a usage error.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.MinimumNArgs(n)(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// parseConfigs splits --config's name=value pairs.
func parseConfigs(kvs []string) (names, values []string, err error) {
	for _, kv := range kvs {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, nil, usagef("--config %q: want name=value, as retention.ms=86400000 (the names: %s)", kv, strings.Join(topic.KafkaConfigNames(), ", "))
		}
		names, values = append(names, name), append(values, value)
	}
	return names, values, nil
}

func newTopicsCreateCmd(a *app) *cobra.Command {
	var (
		partitions  int
		configs     []string
		ifNotExists bool
	)
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a topic",
		Long: `create creates a topic with --partitions partitions and the topic configs given
with --config name=value (Kafka's names and values; the others take their
defaults).`,
		Example: `  strata topics create orders
  strata topics create orders --partitions 6 --config retention.ms=604800000
  strata topics create users --config cleanup.policy=compact --config min.cleanable.dirty.ratio=0.1
  strata topics create orders --if-not-exists`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if partitions < 1 || partitions > topic.MaxPartitions {
				return usagef("--partitions %d: out of range [1, %d]", partitions, topic.MaxPartitions)
			}
			cfg := strata.TopicConfig{Partitions: partitions}
			names, values, err := parseConfigs(configs)
			if err != nil {
				return err
			}
			if err := topic.SetKafkaConfigs(&cfg, names, values); err != nil {
				return err
			}
			s, err := a.openWrite()
			if err != nil {
				return err
			}
			defer s.Close()
			err = s.CreateTopic(name, cfg)
			exists := errors.Is(err, strata.ErrTopicExists) && ifNotExists
			if err != nil && !exists {
				return err
			}
			if a.json() {
				d, err := s.DescribeTopic(name)
				if err != nil {
					return err
				}
				return a.writeJSON(topicJSON(d))
			}
			if exists {
				fmt.Fprintf(a.stdout, "Topic %s exists already.\n", name)
			} else {
				fmt.Fprintf(a.stdout, "Created topic %s.\n", name)
			}
			return s.Close()
		},
	}
	f := cmd.Flags()
	f.IntVar(&partitions, "partitions", 1, "the number of partitions")
	f.StringArrayVar(&configs, "config", nil, "a topic config, name=value (repeatable)")
	f.BoolVar(&ifNotExists, "if-not-exists", false, "succeed, changing nothing, if the topic exists")
	return cmd
}

// topicNames returns the store's topic names, sorted, the internal ones
// (__consumer_offsets) too if internal is set.
func topicNames(s *strata.Store, internal bool) []string {
	names := s.Topics()
	if internal {
		for name := range s.Stats().Topics {
			if topic.IsInternal(name) {
				names = append(names, name)
			}
		}
		slices.Sort(names)
	}
	return names
}

func newTopicsListCmd(a *app) *cobra.Command {
	var internal bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the topics",
		Long: `list lists the topics with their partition count, segments and size. The
store's own topics (__consumer_offsets) are listed with --include-internal.`,
		Example: `  strata topics list
  strata topics list --include-internal -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.openRead()
			if err != nil {
				return err
			}
			defer s.Close()
			type listed struct {
				Name       string `json:"name"`
				Internal   bool   `json:"internal"`
				Partitions int    `json:"partitions"`
				Segments   int    `json:"segments"`
				SizeBytes  int64  `json:"size_bytes"`
			}
			out := []listed{}
			for _, name := range topicNames(s, internal) {
				d, err := s.DescribeTopic(name)
				if errors.Is(err, strata.ErrUnknownTopic) {
					continue // deleted meanwhile
				} else if err != nil {
					return err
				}
				l := listed{Name: name, Internal: topic.IsInternal(name), Partitions: len(d.Partitions)}
				for _, p := range d.Partitions {
					l.Segments += p.Segments
					l.SizeBytes += p.Bytes
				}
				out = append(out, l)
			}
			if a.json() {
				return a.writeJSON(out)
			}
			t := newTable(a.stdout, "TOPIC", "PARTITIONS", "SEGMENTS", "SIZE")
			for _, l := range out {
				name := l.Name
				if l.Internal {
					name += " (internal)"
				}
				t.row(name, l.Partitions, l.Segments, fmtBytes(l.SizeBytes))
			}
			return t.flush()
		},
	}
	cmd.Flags().BoolVar(&internal, "include-internal", false, "list the store's own topics (__consumer_offsets) too")
	return cmd
}
