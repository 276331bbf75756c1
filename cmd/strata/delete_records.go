package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/stratalog/strata"
)

func init() { commands = append(commands, newDeleteRecordsCmd) }

// deleteRecordsFile is Kafka's kafka-delete-records --offset-json-file
// format (DeleteRecordsCommand.scala): offset -1 is the end offset.
type deleteRecordsFile struct {
	Partitions []deleteRecordsEntry `json:"partitions"`
	Version    int                  `json:"version"`
}

type deleteRecordsEntry struct {
	Topic     string `json:"topic"`
	Partition *int   `json:"partition"`
	Offset    *int64 `json:"offset"`
}

// deleteRecordsResult is a partition's start offset after delete-records
// (Kafka's low watermark).
type deleteRecordsResult struct {
	Topic       string `json:"topic"`
	Partition   int    `json:"partition"`
	StartOffset int64  `json:"start_offset"`
}

func newDeleteRecordsCmd(a *app) *cobra.Command {
	var (
		topic     string
		partition int
		offset    int64
		file      string
	)
	cmd := &cobra.Command{
		Use:   "delete-records",
		Short: "Delete a partition's records below an offset, as kafka-delete-records",
		Long: `delete-records moves partitions' start offsets (Kafka's low watermark) forward,
as kafka-delete-records does: the records below can no longer be read, and the
segments wholly below go at the next retention pass (strata retention, or
strata serve's background retention). --offset -1 means the end offset: delete
every record. Moving a start offset backwards changes nothing.

Give one partition with --topic, --partition and --offset, or several in an
--offset-json-file, Kafka's format:

  {"partitions": [{"topic": "orders", "partition": 0, "offset": 42}], "version": 1}

Every partition and offset is checked before any is changed: an unknown
topic or partition, or an offset past the end, changes nothing.`,
		Example: `  strata delete-records --topic orders --partition 0 --offset 42
  strata delete-records --topic orders --partition 0 --offset -1
  strata delete-records --offset-json-file offsets.json -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var entries []deleteRecordsEntry
			switch fl := cmd.Flags(); {
			case file != "" && (fl.Changed("topic") || fl.Changed("partition") || fl.Changed("offset")):
				return usagef("--offset-json-file or --topic, --partition and --offset: not both")
			case file != "":
				var err error
				if entries, err = readDeleteRecordsFile(file); err != nil {
					return err
				}
			case topic == "" || !fl.Changed("offset"):
				return usagef("give --topic, --partition and --offset (or --offset-json-file)")
			default:
				entries = []deleteRecordsEntry{{Topic: topic, Partition: &partition, Offset: &offset}}
			}
			return a.withWrite(func(s *strata.Store) error {
				targets, err := deleteRecordsTargets(s, entries)
				if err != nil {
					return err
				}
				var out []deleteRecordsResult
				for _, t := range targets {
					if err := s.DeleteRecords(t.Topic, t.Partition, t.StartOffset); err != nil {
						return err
					}
					start, err := s.ListOffsets(t.Topic, t.Partition, strata.Earliest)
					if err != nil {
						return err
					}
					out = append(out, deleteRecordsResult{t.Topic, t.Partition, start})
				}
				if a.json() {
					return a.writeJSON(out)
				}
				tb := newTable(a.stdout, "TOPIC", "PARTITION", "START-OFFSET")
				for _, r := range out {
					tb.row(r.Topic, r.Partition, r.StartOffset)
				}
				return tb.flush()
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&topic, "topic", "t", "", "the topic")
	fl.IntVarP(&partition, "partition", "p", 0, "the partition")
	fl.Int64Var(&offset, "offset", 0, "the new start offset: records below it are deleted (-1: the end offset, every record)")
	fl.StringVar(&file, "offset-json-file", "", `a JSON file of partitions and offsets, Kafka's format: {"partitions": [{"topic": "t", "partition": 0, "offset": 5}], "version": 1}`)
	return cmd
}

// readDeleteRecordsFile reads an --offset-json-file.
func readDeleteRecordsFile(file string) ([]deleteRecordsEntry, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, usagef("--offset-json-file: %v", err)
	}
	var f deleteRecordsFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, usagef(`--offset-json-file %s: %v: want {"partitions": [{"topic": "t", "partition": 0, "offset": 5}], "version": 1}`, file, err)
	}
	if len(f.Partitions) == 0 {
		return nil, usagef("--offset-json-file %s: no partitions in it", file)
	}
	seen := map[string]bool{}
	for i, e := range f.Partitions {
		if e.Topic == "" || e.Partition == nil || e.Offset == nil {
			return nil, usagef("--offset-json-file %s: entry %d: want topic, partition and offset", file, i)
		}
		k := fmt.Sprintf("%s-%d", e.Topic, *e.Partition)
		if seen[k] {
			return nil, usagef("--offset-json-file %s: partition %s listed twice", file, k)
		}
		seen[k] = true
	}
	return f.Partitions, nil
}

// deleteRecordsTargets checks every entry against the store, before any
// change: the topic and partition exist, the offset is -1 or in [0, end].
// It returns the offsets to delete below, -1 resolved to the end offset.
func deleteRecordsTargets(s *strata.Store, entries []deleteRecordsEntry) ([]deleteRecordsResult, error) {
	var out []deleteRecordsResult
	for _, e := range entries {
		d, err := s.DescribeTopic(e.Topic)
		if err != nil {
			return nil, err
		}
		p, off := *e.Partition, *e.Offset
		if p < 0 || p >= len(d.Partitions) {
			return nil, fmt.Errorf("partition %d of %s: the topic has partitions [0, %d): %w", p, e.Topic, len(d.Partitions), strata.ErrUnknownPartition)
		}
		pd := d.Partitions[p]
		switch {
		case off == -1:
			off = pd.EndOffset
		case off < 0 || off > pd.EndOffset:
			return nil, fmt.Errorf("offset %d of %s-%d out of range [%d, %d] (or -1, the end offset): %w", off, e.Topic, p, pd.StartOffset, pd.EndOffset, strata.ErrOffsetOutOfRange)
		}
		out = append(out, deleteRecordsResult{e.Topic, p, off})
	}
	return out, nil
}
