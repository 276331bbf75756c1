package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/stratalog/strata"
	"github.com/stratalog/strata/topic"
)

// topicDescJSON is a topic as describe -o json prints it.
type topicDescJSON struct {
	Name       string              `json:"name"`
	ID         string              `json:"id"`
	Internal   bool                `json:"internal"`
	Partitions []partitionDescJSON `json:"partitions"`
	Configs    []configJSON        `json:"configs"`
}

type partitionDescJSON struct {
	Partition       int     `json:"partition"`
	StartOffset     int64   `json:"start_offset"`
	EndOffset       int64   `json:"end_offset"`
	Segments        int     `json:"segments"`
	SizeBytes       int64   `json:"size_bytes"`
	OldestTimestamp *string `json:"oldest_timestamp"` // null when empty
	NewestTimestamp *string `json:"newest_timestamp"`
}

// configJSON is one topic config: its value, and whether it is the
// default or was set (it differs from the default).
type configJSON struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	Default bool   `json:"default"`
}

// timeLayout is how the commands write a time: RFC 3339 in UTC, to the
// millisecond (Kafka's precision).
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func jsonTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := fmtTime(t)
	return &s
}

// topicConfigs lists c's Kafka configs, sorted by name, each marked default
// when it is the value a topic created without configs has. The store
// keeps the configs with their defaults filled in, so a config set to its
// default value shows as default. A default that follows segment.bytes
// (max.message.bytes, at most the segment size) is the one the topic's
// segment.bytes gives.
func topicConfigs(c strata.TopicConfig) []configJSON {
	def, err := strata.TopicConfig{Partitions: c.Partitions}.WithDefaults()
	if err != nil {
		def = c
	}
	bySegment, err := strata.TopicConfig{Partitions: c.Partitions, SegmentBytes: c.SegmentBytes}.WithDefaults()
	if err != nil {
		bySegment = def
	}
	def.MaxBatchBytes = bySegment.MaxBatchBytes
	values, defaults := topic.KafkaConfigs(c), topic.KafkaConfigs(def)
	out := []configJSON{}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		d, ok := defaults[name]
		if !ok {
			d = "0" // a compression level: the codec's own
		}
		out = append(out, configJSON{Name: name, Value: values[name], Default: values[name] == d})
	}
	return out
}

func topicJSON(d strata.TopicDescription) topicDescJSON {
	out := topicDescJSON{Name: d.Name, ID: d.ID.String(), Internal: topic.IsInternal(d.Name),
		Partitions: []partitionDescJSON{}, Configs: topicConfigs(d.Config)}
	for _, p := range d.Partitions {
		out.Partitions = append(out.Partitions, partitionDescJSON{
			Partition: p.Partition, StartOffset: p.StartOffset, EndOffset: p.EndOffset,
			Segments: p.Segments, SizeBytes: p.Bytes,
			OldestTimestamp: jsonTime(p.OldestTimestamp), NewestTimestamp: jsonTime(p.NewestTimestamp),
		})
	}
	return out
}

// fmtBytes writes n bytes for people: 1023 B, 1.5 KiB, 12.0 MiB.
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func newTopicsDescribeCmd(a *app) *cobra.Command {
	var internal bool
	cmd := &cobra.Command{
		Use:   "describe [NAME...]",
		Short: "Describe topics: partitions, offsets, sizes, timestamps and configs",
		Long: `describe prints, for each topic named (every topic for none), its id, and per
partition the start and end offsets, the segments, the size and the
timestamps of the oldest and newest records; then the topic's configs by
Kafka's names, each marked default or set (set: not the default value).`,
		Example: `  strata topics describe orders
  strata topics describe            # every topic
  strata topics describe __consumer_offsets
  strata topics describe orders -o json`,
		RunE: func(cmd *cobra.Command, names []string) error {
			s, err := a.openRead()
			if err != nil {
				return err
			}
			defer s.Close()
			all := len(names) == 0
			if all {
				names = topicNames(s, internal)
			}
			var out []topicDescJSON
			for _, name := range names {
				d, err := s.DescribeTopic(name)
				if all && errors.Is(err, strata.ErrUnknownTopic) {
					continue // deleted meanwhile
				} else if err != nil {
					return err
				}
				out = append(out, topicJSON(d))
			}
			if a.json() {
				if out == nil {
					out = []topicDescJSON{}
				}
				return a.writeJSON(out)
			}
			for i, d := range out {
				if i > 0 {
					fmt.Fprintln(a.stdout)
				}
				if err := a.printTopic(d); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&internal, "include-internal", false, "with no names, describe the store's own topics (__consumer_offsets) too")
	return cmd
}

func (a *app) printTopic(d topicDescJSON) error {
	fmt.Fprintf(a.stdout, "Topic: %s  ID: %s  Partitions: %d\n", d.Name, d.ID, len(d.Partitions))
	t := newTable(a.stdout, "PARTITION", "START-OFFSET", "END-OFFSET", "SEGMENTS", "SIZE", "OLDEST-TIMESTAMP", "NEWEST-TIMESTAMP")
	for _, p := range d.Partitions {
		oldest, newest := "-", "-"
		if p.OldestTimestamp != nil {
			oldest = *p.OldestTimestamp
		}
		if p.NewestTimestamp != nil {
			newest = *p.NewestTimestamp
		}
		t.row(p.Partition, p.StartOffset, p.EndOffset, p.Segments, fmtBytes(p.SizeBytes), oldest, newest)
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout)
	t = newTable(a.stdout, "CONFIG", "VALUE", "SOURCE")
	for _, c := range d.Configs {
		source := "set"
		if c.Default {
			source = "default"
		}
		t.row(c.Name, c.Value, source)
	}
	return t.flush()
}
