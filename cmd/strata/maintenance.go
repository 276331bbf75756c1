package main

import (
	"errors"
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/stratalog/strata"
)

func init() { commands = append(commands, newRetentionCmd, newCompactCmd) }

// withWrite opens the directory for writing, runs fn on the store and
// closes it.
func (a *app) withWrite(fn func(*strata.Store) error) error {
	s, err := a.openWrite()
	if err != nil {
		return err
	}
	err = fn(s)
	return errors.Join(err, s.Close())
}

// retentionResult is one partition's share of what retention removed.
type retentionResult struct {
	Topic           string `json:"topic"`
	Partition       int    `json:"partition"`
	SegmentsDeleted int    `json:"segments_deleted"`
	BytesDeleted    int64  `json:"bytes_deleted"`
	StartOffset     int64  `json:"start_offset"`
}

func newRetentionCmd(a *app) *cobra.Command {
	var topic string
	cmd := &cobra.Command{
		Use:   "retention",
		Short: "Apply retention now: delete the segments retention.ms and retention.bytes let go",
		Long: `retention applies every topic's retention now (or one topic's, with --topic),
as the store does every log.retention.check.interval.ms: per partition it
deletes whole segments, oldest first, that lie wholly below the start offset
(delete-records), beyond retention.bytes, or whose newest record is older than
retention.ms. The active segment goes too once all of it has expired. It
reports, per partition that lost segments, how many, their bytes and the new
start offset.`,
		Example: `  strata retention
  strata retention --topic events
  strata retention -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withWrite(func(s *strata.Store) error {
				before := s.Stats()
				if topic != "" {
					if _, err := s.EnforceTopicRetention(cmd.Context(), topic); err != nil {
						return err
					}
				} else if _, err := s.EnforceRetention(cmd.Context()); err != nil {
					return err
				}
				return a.printRetention(retentionDiff(before, s.Stats()))
			})
		},
	}
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "apply only this topic's retention")
	return cmd
}

// retentionDiff is what retention removed between two Stats of the same
// store, per partition that lost segments, sorted by topic and partition:
// the segments it deleted are those gone less those its rolls made (a
// partition whose every segment expired gets a new, empty one).
func retentionDiff(before, after strata.Stats) []retentionResult {
	var out []retentionResult
	for name, parts := range after.Topics {
		was := before.Topics[name]
		for i, st := range parts {
			if i >= len(was) {
				continue
			}
			deleted := was[i].Segments + int(st.Rolls-was[i].Rolls) - st.Segments
			if deleted <= 0 {
				continue
			}
			out = append(out, retentionResult{
				Topic: name, Partition: i,
				SegmentsDeleted: deleted,
				BytesDeleted:    was[i].Bytes - st.Bytes,
				StartOffset:     st.StartOffset,
			})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

func (a *app) printRetention(rs []retentionResult) error {
	var segs int
	var bytes int64
	for _, r := range rs {
		segs += r.SegmentsDeleted
		bytes += r.BytesDeleted
	}
	if a.json() {
		if rs == nil {
			rs = []retentionResult{}
		}
		return a.writeJSON(struct {
			SegmentsDeleted int               `json:"segments_deleted"`
			BytesDeleted    int64             `json:"bytes_deleted"`
			Partitions      []retentionResult `json:"partitions"`
		}{segs, bytes, rs})
	}
	if len(rs) == 0 {
		_, err := fmt.Fprintln(a.stdout, "nothing to delete: every partition is within its retention")
		return err
	}
	t := newTable(a.stdout, "TOPIC", "PARTITION", "SEGMENTS-DELETED", "BYTES-DELETED", "START-OFFSET")
	for _, r := range rs {
		t.row(r.Topic, r.Partition, r.SegmentsDeleted, r.BytesDeleted, r.StartOffset)
	}
	if err := t.flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(a.stdout, "deleted %s, %s, in %s\n", plural(int64(segs), "segment"), plural(bytes, "byte"), plural(int64(len(rs)), "partition"))
	return err
}

// compactResult is what compaction did to one topic.
type compactResult struct {
	Topic             string `json:"topic"`
	SegmentsWritten   int    `json:"segments_written"`
	RecordsRead       int64  `json:"records_read"`
	RecordsWritten    int64  `json:"records_written"`
	BytesRead         int64  `json:"bytes_read"`
	BytesWritten      int64  `json:"bytes_written"`
	Superseded        int64  `json:"superseded"`
	Keyless           int64  `json:"keyless"`
	TombstonesExpired int64  `json:"tombstones_expired"`
	Aborted           int64  `json:"aborted"`
	MarkersRemoved    int64  `json:"markers_removed"`
}

func newCompactCmd(a *app) *cobra.Command {
	var topic string
	cmd := &cobra.Command{
		Use:   "compact",
		Short: "Compact the compacted topics now: keep the latest record of each key",
		Long: `compact runs the cleaner now on every compacted topic (cleanup.policy compact
or compact,delete), or on one with --topic, as the store does every
log.cleaner.backoff.ms: it cleans the partitions that are due, by
min.cleanable.dirty.ratio or a record older than max.compaction.lag.ms,
keeping the latest record of every key at its offset; the active segment is
never cleaned. It reports what the cleaning read, wrote and dropped, per
topic. A progress bar counts the topics on a terminal.

To clean a partition that is not due yet, lower its min.cleanable.dirty.ratio
first. A topic that does not compact (cleanup.policy delete) is refused.`,
		Example: `  strata compact
  strata compact --topic prices
  strata compact -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withWrite(func(s *strata.Store) error {
				topics := []string{topic}
				if topic == "" {
					topics = compactedTopics(s)
				}
				bar := a.newProgress("compacting", int64(len(topics)), "topics")
				var out []compactResult
				for _, name := range topics {
					st, err := s.Compact(cmd.Context(), name)
					if err != nil {
						bar.finish()
						return err
					}
					out = append(out, compactResult{
						Topic: name, SegmentsWritten: st.Segments,
						RecordsRead: st.RecordsRead, RecordsWritten: st.RecordsWritten,
						BytesRead: st.BytesRead, BytesWritten: st.BytesWritten,
						Superseded: st.Superseded, Keyless: st.Keyless, TombstonesExpired: st.TombstonesExpired,
						Aborted: st.Aborted, MarkersRemoved: st.MarkersRemoved,
					})
					bar.add(1)
				}
				bar.finish()
				return a.printCompact(out)
			})
		},
	}
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "compact only this topic")
	return cmd
}

// compactedTopics are the store's compacted topics, __consumer_offsets
// among them once it exists, sorted.
func compactedTopics(s *strata.Store) []string {
	var out []string
	for _, name := range append(s.Topics(), strata.ConsumerOffsetsTopic) {
		if d, err := s.DescribeTopic(name); err == nil && d.Config.CleanupPolicy.Compacts() {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (a *app) printCompact(rs []compactResult) error {
	if a.json() {
		if rs == nil {
			rs = []compactResult{}
		}
		return a.writeJSON(rs)
	}
	if len(rs) == 0 {
		_, err := fmt.Fprintln(a.stdout, "no compacted topics")
		return err
	}
	t := newTable(a.stdout, "TOPIC", "SEGMENTS-WRITTEN", "RECORDS-READ", "RECORDS-WRITTEN", "BYTES-READ", "BYTES-WRITTEN", "SUPERSEDED", "TOMBSTONES-EXPIRED")
	for _, r := range rs {
		t.row(r.Topic, r.SegmentsWritten, r.RecordsRead, r.RecordsWritten, r.BytesRead, r.BytesWritten, r.Superseded, r.TombstonesExpired)
	}
	return t.flush()
}
