package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/stratalog/strata"
)

// resetFlags are reset-offsets' flags.
type resetFlags struct {
	group          string
	topics         []string
	allTopics      bool
	toEarliest     bool
	toLatest       bool
	toDatetime     string
	toOffset       int64
	shiftBy        int64
	dryRun, execut bool
}

// resetPlanJSON is one line of the plan as -o json prints it.
type resetPlanJSON struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	// PreviousOffset is the committed offset before, null if none.
	PreviousOffset *int64 `json:"previous_offset"`
	NewOffset      int64  `json:"new_offset"`
}

// topicSelection is one --topic: a topic and the partitions of it to
// reset, nil for all.
type topicSelection struct {
	topic string
	parts []int
}

func newGroupsResetCmd(a *app) *cobra.Command {
	var f resetFlags
	cmd := &cobra.Command{
		Use:   "reset-offsets --group GROUP (--topic TOPIC[:P,...]... | --all-topics) SPEC [--execute]",
		Short: "Move a group's committed offsets (a dry run unless --execute)",
		Long: `reset-offsets moves a group's committed offsets, as kafka-consumer-groups
--reset-offsets does, on the partitions of --topic (all of the topic's, or
those listed: orders:0,2) or, with --all-topics, of every topic the group has
committed offsets for. SPEC is one of:

  --to-earliest        each partition's start offset
  --to-latest          each partition's end offset (skip everything)
  --to-datetime T      the first record at or after T, in Kafka's format
                       YYYY-MM-DDTHH:mm:SS.sss, with Z or +hh:mm/-hh:mm (local
                       time without); the end offset where there is none
  --to-offset N        offset N
  --shift-by N         the committed offset plus N (negative: back); from the
                       start offset where nothing is committed

As Kafka does, an offset outside a partition's [start, end] is clamped to it,
with a warning on stderr.

Without --execute it is a dry run: it prints the plan (GROUP TOPIC PARTITION
NEW-OFFSET) and changes nothing; it only reads, so it works on a directory a
running process holds. --execute applies the plan: it writes, so it refuses a
directory another process holds (exit status 3) — Kafka refuses a group with
active members, and with the directory's lock held no consumer of it can be
running. A group whose members' process stopped without leaving is empty once
the directory is opened for writing.`,
		Example: `  strata groups reset-offsets --group billing --topic orders --to-earliest
  strata groups reset-offsets --group billing --topic orders --to-earliest --execute
  strata groups reset-offsets --group billing --topic orders:0,2 --to-offset 100 --execute
  strata groups reset-offsets --group billing --all-topics --to-datetime 2026-05-01T00:00:00.000Z --execute
  strata groups reset-offsets --group billing --topic orders --shift-by -10 -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, desc, err := f.spec(cmd)
			if err != nil {
				return err
			}
			sel, err := f.selections()
			if err != nil {
				return err
			}
			open := a.openRead
			if f.execut {
				open = a.openWrite
			}
			s, err := open()
			if err != nil {
				return err
			}
			defer s.Close()
			if f.allTopics {
				if sel, err = groupTopics(cmd, s, f.group); err != nil {
					return err
				}
			}
			plan, err := a.resetPlan(s, &f, sel, spec, desc)
			if err != nil {
				return err
			}
			if f.execut {
				if err := applyReset(s, f.group, sel, spec, plan); err != nil {
					return err
				}
				if err := s.Close(); err != nil {
					return err
				}
			}
			if a.json() {
				if err := a.writeJSON(plan); err != nil {
					return err
				}
			} else {
				t := newTable(a.stdout, "GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
				for _, p := range plan {
					t.row(p.Group, p.Topic, p.Partition, p.NewOffset)
				}
				if err := t.flush(); err != nil {
					return err
				}
			}
			if !f.execut {
				fmt.Fprintln(a.stderr, "strata: a dry run: nothing changed; add --execute to apply the plan")
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.group, "group", "", "the group (required)")
	fl.StringArrayVar(&f.topics, "topic", nil, "a topic, or topic:P,P,... for some of its partitions (repeat for more)")
	fl.BoolVar(&f.allTopics, "all-topics", false, "every topic the group has committed offsets for")
	fl.BoolVar(&f.toEarliest, "to-earliest", false, "reset to each partition's start offset")
	fl.BoolVar(&f.toLatest, "to-latest", false, "reset to each partition's end offset")
	fl.StringVar(&f.toDatetime, "to-datetime", "", "reset to the first record at or after this time (YYYY-MM-DDTHH:mm:SS.sss[Z|+hh:mm])")
	fl.Int64Var(&f.toOffset, "to-offset", 0, "reset to this offset")
	fl.Int64Var(&f.shiftBy, "shift-by", 0, "move the committed offset by N (negative: back)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan only (the default)")
	fl.BoolVar(&f.execut, "execute", false, "apply the plan")
	return cmd
}

// spec returns the reset spec the flags give, and its flag, for
// messages.
func (f *resetFlags) spec(cmd *cobra.Command) (strata.ResetSpec, string, error) {
	switch {
	case f.group == "":
		return strata.ResetSpec{}, "", usagef("reset-offsets needs --group")
	case f.dryRun && f.execut:
		return strata.ResetSpec{}, "", usagef("--dry-run and --execute: give one")
	case f.allTopics && len(f.topics) > 0:
		return strata.ResetSpec{}, "", usagef("--topic and --all-topics: give one")
	case !f.allTopics && len(f.topics) == 0:
		return strata.ResetSpec{}, "", usagef("reset-offsets needs --topic or --all-topics")
	}
	var specs []string
	for _, name := range []string{"to-earliest", "to-latest", "to-datetime", "to-offset", "shift-by"} {
		if cmd.Flags().Changed(name) {
			specs = append(specs, "--"+name)
		}
	}
	if len(specs) != 1 {
		return strata.ResetSpec{}, "", usagef("give one of --to-earliest, --to-latest, --to-datetime, --to-offset, --shift-by (got %d)", len(specs))
	}
	switch specs[0] {
	case "--to-earliest":
		return strata.ToEarliest, specs[0], nil
	case "--to-latest":
		return strata.ToLatest, specs[0], nil
	case "--to-datetime":
		t, err := parseKafkaDatetime(f.toDatetime)
		if err != nil {
			return strata.ResetSpec{}, "", err
		}
		return strata.ToTime(t), specs[0], nil
	case "--to-offset":
		if f.toOffset < 0 {
			return strata.ResetSpec{}, "", usagef("--to-offset %d: an offset is at least 0", f.toOffset)
		}
		return strata.ToOffset(f.toOffset), specs[0], nil
	}
	return strata.ShiftBy(f.shiftBy), specs[0], nil
}

// selections parses the --topic flags.
func (f *resetFlags) selections() ([]topicSelection, error) {
	var out []topicSelection
	for _, t := range f.topics {
		name, list, ok := strings.Cut(t, ":")
		sel := topicSelection{topic: name}
		if ok {
			for p := range strings.SplitSeq(list, ",") {
				n, err := strconv.Atoi(p)
				if err != nil || n < 0 {
					return nil, usagef("--topic %q: want TOPIC or TOPIC:P,P,... with partition numbers", t)
				}
				if !slices.Contains(sel.parts, n) {
					sel.parts = append(sel.parts, n)
				}
			}
		}
		out = append(out, sel)
	}
	return out, nil
}

// kafkaDatetimeLayouts are the layouts of --to-datetime: Kafka's
// yyyy-MM-dd'T'HH:mm:ss.SSS, with an optional zone (Z, +hh:mm or -hh:mm);
// the milliseconds may be left out.
var kafkaDatetimeLayouts = []string{
	"2006-01-02T15:04:05.000Z07:00",
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04:05.000",
	"2006-01-02T15:04:05",
}

// parseKafkaDatetime parses a --to-datetime; a time without a zone is
// local, as Kafka takes it.
func parseKafkaDatetime(s string) (time.Time, error) {
	for _, layout := range kafkaDatetimeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usagef("--to-datetime %q: want Kafka's format YYYY-MM-DDTHH:mm:SS.sss, with Z or +hh:mm/-hh:mm for a zone other than the local one (2026-05-01T12:00:00.000Z)", s)
}

// groupTopics is --all-topics: a selection of every topic the group has
// committed offsets for, which must exist (ErrUnknownGroup).
func groupTopics(cmd *cobra.Command, s *strata.Store, group string) ([]topicSelection, error) {
	d, err := s.DescribeGroup(cmd.Context(), group)
	if err != nil {
		return nil, err
	}
	var out []topicSelection
	for _, p := range d.Partitions {
		if p.Committed >= 0 && !slices.ContainsFunc(out, func(t topicSelection) bool { return t.topic == p.Topic }) {
			out = append(out, topicSelection{topic: p.Topic})
		}
	}
	return out, nil
}

// resetPlan is the plan of a reset of group on sel to spec: a dry run of
// strata.ResetOffsets on each topic, keeping the partitions selected. It
// warns on a.stderr of an offset that --to-offset or --shift-by (f) asked
// for outside a partition's range, which the reset clamps, as Kafka does.
func (a *app) resetPlan(s *strata.Store, f *resetFlags, sel []topicSelection, spec strata.ResetSpec, desc string) ([]resetPlanJSON, error) {
	plan := []resetPlanJSON{}
	for _, t := range sel {
		changes, err := s.ResetOffsets(f.group, t.topic, spec, true)
		if err != nil {
			return nil, err
		}
		for _, p := range t.parts {
			if p >= len(changes) {
				return nil, usagef("--topic %s:%d: topic %s has partitions [0, %d)", t.topic, p, t.topic, len(changes))
			}
		}
		for _, ch := range changes {
			if t.parts != nil && !slices.Contains(t.parts, ch.Partition) {
				continue
			}
			line := resetPlanJSON{Group: f.group, Topic: t.topic, Partition: ch.Partition, NewOffset: ch.To}
			if ch.From >= 0 {
				line.PreviousOffset = &ch.From
			}
			plan = append(plan, line)
			a.warnClamped(s, f, desc, line)
		}
	}
	return plan, nil
}

// warnClamped warns when line's new offset is not the one --to-offset or
// --shift-by asked for: the reset clamped it to the partition's range.
func (a *app) warnClamped(s *strata.Store, f *resetFlags, desc string, line resetPlanJSON) {
	start, err := s.ListOffsets(line.Topic, line.Partition, strata.Earliest)
	if err != nil {
		return
	}
	var asked int64
	switch desc {
	case "--to-offset":
		asked = f.toOffset
	case "--shift-by":
		from := start
		if line.PreviousOffset != nil {
			from = *line.PreviousOffset
		}
		asked = from + f.shiftBy
		if (f.shiftBy > 0 && asked < from) || (f.shiftBy < 0 && asked > from) {
			asked = math.MaxInt64 // as the reset's own sum, which saturates
			if f.shiftBy < 0 {
				asked = math.MinInt64
			}
		}
	default:
		return
	}
	if asked != line.NewOffset {
		fmt.Fprintf(a.stderr, "strata: warning: %s-%d: %s asks for offset %d, outside the partition's range: reset to %d\n",
			line.Topic, line.Partition, desc, asked, line.NewOffset)
	}
}

// applyReset applies plan: a whole topic with strata.ResetOffsets, some
// of its partitions with a commit each (keeping the offset's metadata).
func applyReset(s *strata.Store, group string, sel []topicSelection, spec strata.ResetSpec, plan []resetPlanJSON) error {
	for _, t := range sel {
		if t.parts == nil {
			if _, err := s.ResetOffsets(group, t.topic, spec, false); err != nil {
				return err
			}
			continue
		}
		for _, p := range plan {
			if p.Topic != t.topic {
				continue
			}
			om, _ := s.Committed(group, p.Topic, p.Partition)
			if err := s.Commit(group, p.Topic, p.Partition, p.NewOffset, om.Metadata); err != nil {
				return err
			}
		}
	}
	return nil
}
