package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/stratalog/strata"
)

func init() { commands = append(commands, newGroupsCmd) }

func newGroupsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "groups",
		Short: "List, describe, reset and delete consumer groups (as kafka-consumer-groups)",
		Long: `groups works on the directory's consumer groups, with kafka-consumer-groups'
vocabulary: their members as the owning process last recorded them in
__consumer_offsets (at each rebalance), their committed offsets, lag and the
age of the oldest record they have not consumed.

list, describe and a reset-offsets dry run only read: they work on a directory
a running process holds, and see its commits and rebalances as they happen.
reset-offsets --execute and delete write: they refuse a directory another
process holds (exit status 3), so no consumer of the group can be running.`,
		Example: `  strata groups list
  strata groups describe billing
  strata groups describe billing --members --verbose
  strata groups reset-offsets --group billing --topic orders --to-earliest --execute
  strata groups delete --group billing`,
		Args: noArgs,
	}
	cmd.AddCommand(newGroupsListCmd(a), newGroupsDescribeCmd(a), newGroupsResetCmd(a), newGroupsDeleteCmd(a))
	return cmd
}

// groupListJSON is a group as list -o json prints it.
type groupListJSON struct {
	Group        string `json:"group"`
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	Protocol     string `json:"protocol"`
	Members      int    `json:"members"`
}

func newGroupsListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the consumer groups, with their state, members and protocol",
		Long: `list lists every consumer group of the directory: those with committed
offsets or recorded membership. STATE is Kafka's: Stable (it has members) or
Empty; PROTOCOL the assignor of its generation.`,
		Example: "  strata groups list\n  strata groups list -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.openRead()
			if err != nil {
				return err
			}
			defer s.Close()
			groups, err := s.ListGroups()
			if err != nil {
				return err
			}
			if a.json() {
				out := []groupListJSON{}
				for _, g := range groups {
					out = append(out, groupListJSON(g))
				}
				return a.writeJSON(out)
			}
			t := newTable(a.stdout, "GROUP", "STATE", "MEMBERS", "PROTOCOL")
			for _, g := range groups {
				t.row(g.Group, g.State, g.Members, dash(g.Protocol))
			}
			return t.flush()
		},
	}
}

// describeFlags are describe's flags: the view (offsets by default).
type describeFlags struct {
	all, members, state, verbose bool
}

func newGroupsDescribeCmd(a *app) *cobra.Command {
	var f describeFlags
	cmd := &cobra.Command{
		Use:   "describe GROUP...",
		Short: "Describe consumer groups: offsets and lag per partition, members, or state",
		Long: `describe describes consumer groups as kafka-consumer-groups --describe does.

By default, per partition the group has a committed offset for or a member is
assigned: CURRENT-OFFSET (the committed offset, - if none), LOG-END-OFFSET, LAG
(from the start of the partition when nothing is committed), OLDEST-UNCONSUMED
(how long ago the oldest record not consumed yet was written, - when the lag
is 0), and the member the partition is assigned to (CONSUMER-ID, HOST,
CLIENT-ID; - if none).

--members lists the members (with --verbose, their assignments); --state the
group's assignment strategy, state, generation and member count.

The members are those the owning process recorded at the group's last
rebalance: a Consumer of the process shows CLIENT-ID strata and HOST
localhost; the Kafka clients of strata serve their client ids.`,
		Example: `  strata groups describe billing
  strata groups describe billing audit -o json
  strata groups describe --all-groups --state
  strata groups describe billing --members --verbose`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case f.all && len(args) > 0:
				return usagef("give groups or --all-groups, not both")
			case !f.all && len(args) == 0:
				return usagef("describe needs a group (or --all-groups)")
			case f.members && f.state:
				return usagef("--members and --state: give one")
			case f.verbose && !f.members:
				return usagef("--verbose goes with --members")
			}
			s, err := a.openRead()
			if err != nil {
				return err
			}
			defer s.Close()
			names := args
			if f.all {
				groups, err := s.ListGroups()
				if err != nil {
					return err
				}
				names = nil
				for _, g := range groups {
					names = append(names, g.Group)
				}
			}
			descs := make([]strata.GroupDescription, 0, len(names))
			for _, name := range names {
				d, err := s.DescribeGroup(cmd.Context(), name)
				if err != nil {
					return err
				}
				descs = append(descs, d)
			}
			now := time.Now()
			if a.json() {
				out := []groupDescJSON{}
				for _, d := range descs {
					out = append(out, groupDescriptionJSON(d, now))
				}
				return a.writeJSON(out)
			}
			return a.printDescriptions(descs, f, now)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.all, "all-groups", false, "describe every group")
	fl.BoolVar(&f.members, "members", false, "list the members")
	fl.BoolVar(&f.state, "state", false, "show the group's state")
	fl.BoolVar(&f.verbose, "verbose", false, "with --members: each member's assignment")
	return cmd
}

// printDescriptions writes descs as tables, one block a group as
// kafka-consumer-groups does.
func (a *app) printDescriptions(descs []strata.GroupDescription, f describeFlags, now time.Time) error {
	for i, d := range descs {
		if i > 0 {
			fmt.Fprintln(a.stdout)
		}
		if !f.state && len(d.Members) == 0 {
			fmt.Fprintf(a.stdout, "Consumer group '%s' has no active members.\n", d.Group)
			if f.members || len(d.Partitions) == 0 {
				continue // no rows: no table, as kafka-consumer-groups
			}
			fmt.Fprintln(a.stdout)
		}
		var err error
		switch {
		case f.state:
			t := newTable(a.stdout, "GROUP", "ASSIGNMENT-STRATEGY", "STATE", "GENERATION", "#MEMBERS")
			t.row(d.Group, dash(d.Protocol), d.State, d.Generation, len(d.Members))
			err = t.flush()
		case f.members:
			headers := []string{"GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"}
			if f.verbose {
				headers = append(headers, "ASSIGNMENT")
			}
			t := newTable(a.stdout, headers...)
			for _, m := range d.Members {
				cells := []any{d.Group, m.MemberID, dash(m.ClientHost), dash(m.ClientID), len(m.Assigned)}
				if f.verbose {
					cells = append(cells, assignment(m.Assigned))
				}
				t.row(cells...)
			}
			err = t.flush()
		default:
			members := map[string]strata.GroupMemberDescription{}
			for _, m := range d.Members {
				members[m.MemberID] = m
			}
			t := newTable(a.stdout, "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
				"OLDEST-UNCONSUMED", "CONSUMER-ID", "HOST", "CLIENT-ID")
			for _, p := range d.Partitions {
				m := members[p.MemberID]
				current := "-"
				if p.Committed >= 0 {
					current = fmt.Sprint(p.Committed)
				}
				t.row(d.Group, p.Topic, p.Partition, current, p.EndOffset, p.Lag, age(p.OldestUnconsumed, now),
					dash(p.MemberID), dash(m.ClientHost), dash(m.ClientID))
			}
			err = t.flush()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// assignment writes parts as kafka-consumer-groups --members --verbose
// does: topic(p,p,...) per topic, "-" for none.
func assignment(parts []strata.TopicPartition) string {
	if len(parts) == 0 {
		return "-"
	}
	var b strings.Builder
	for i, tp := range parts {
		switch {
		case i == 0:
			fmt.Fprintf(&b, "%s(%d", tp.Topic, tp.Partition)
		case parts[i-1].Topic != tp.Topic:
			fmt.Fprintf(&b, "), %s(%d", tp.Topic, tp.Partition)
		default:
			fmt.Fprintf(&b, ",%d", tp.Partition)
		}
	}
	b.WriteString(")")
	return b.String()
}

// age is how long before now t was, to the second; "-" for zero t.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return max(now.Sub(t), 0).Round(time.Second).String()
}

// dash is s, or "-" when empty, as kafka-consumer-groups writes a missing
// value.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// groupDescJSON is a group as describe -o json prints it.
type groupDescJSON struct {
	Group        string            `json:"group"`
	State        string            `json:"state"`
	ProtocolType string            `json:"protocol_type"`
	Protocol     string            `json:"protocol"`
	Generation   int               `json:"generation"`
	StateTime    *string           `json:"state_timestamp"` // null when no membership was recorded
	Members      []groupMemberJSON `json:"members"`
	Partitions   []groupOffsetJSON `json:"partitions"`
}

type groupMemberJSON struct {
	MemberID   string               `json:"member_id"`
	InstanceID string               `json:"instance_id"`
	ClientID   string               `json:"client_id"`
	ClientHost string               `json:"client_host"`
	Topics     []string             `json:"topics"`
	Assigned   []groupPartitionJSON `json:"assigned"`
}

type groupPartitionJSON struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
}

type groupOffsetJSON struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	// CommittedOffset is null when the group has none.
	CommittedOffset *int64 `json:"committed_offset"`
	LogEndOffset    int64  `json:"log_end_offset"`
	Lag             int64  `json:"lag"`
	// OldestUnconsumed is the timestamp of the oldest record not consumed,
	// and OldestUnconsumedAgeMs how long before the command ran it was;
	// both null when the lag is 0.
	OldestUnconsumed      *string `json:"oldest_unconsumed_timestamp"`
	OldestUnconsumedAgeMs *int64  `json:"oldest_unconsumed_age_ms"`
	MemberID              string  `json:"member_id"`
}

func groupDescriptionJSON(d strata.GroupDescription, now time.Time) groupDescJSON {
	out := groupDescJSON{Group: d.Group, State: d.State, ProtocolType: d.ProtocolType, Protocol: d.Protocol,
		Generation: d.Generation, StateTime: jsonTime(d.StateTime), Members: []groupMemberJSON{}, Partitions: []groupOffsetJSON{}}
	for _, m := range d.Members {
		mj := groupMemberJSON{MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost,
			Topics: m.Topics, Assigned: []groupPartitionJSON{}}
		if mj.Topics == nil {
			mj.Topics = []string{}
		}
		for _, tp := range m.Assigned {
			mj.Assigned = append(mj.Assigned, groupPartitionJSON{tp.Topic, tp.Partition})
		}
		out.Members = append(out.Members, mj)
	}
	for _, p := range d.Partitions {
		pj := groupOffsetJSON{Topic: p.Topic, Partition: p.Partition, LogEndOffset: p.EndOffset, Lag: p.Lag,
			OldestUnconsumed: jsonTime(p.OldestUnconsumed), MemberID: p.MemberID}
		if p.Committed >= 0 {
			pj.CommittedOffset = &p.Committed
		}
		if !p.OldestUnconsumed.IsZero() {
			ms := max(now.Sub(p.OldestUnconsumed), 0).Milliseconds()
			pj.OldestUnconsumedAgeMs = &ms
		}
		out.Partitions = append(out.Partitions, pj)
	}
	return out
}

func newGroupsDeleteCmd(a *app) *cobra.Command {
	var groups []string
	cmd := &cobra.Command{
		Use:   "delete --group GROUP...",
		Short: "Delete consumer groups: their committed offsets and recorded membership",
		Long: `delete deletes consumer groups, as kafka-consumer-groups --delete does: their
committed offsets and recorded membership go (tombstones in
__consumer_offsets). It writes, so it refuses a directory another process
holds; a group with members (Kafka clients of a strata serve that holds the
directory, which then refuses the command) cannot be deleted, as in Kafka.`,
		Example: "  strata groups delete --group billing\n  strata groups delete --group billing --group audit",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(groups) == 0 {
				return usagef("delete needs --group")
			}
			s, err := a.openWrite()
			if err != nil {
				return err
			}
			defer s.Close()
			// Every group must exist before any is deleted.
			known, err := s.ListGroups()
			if err != nil {
				return err
			}
			for _, g := range groups {
				if !slices.ContainsFunc(known, func(l strata.GroupListing) bool { return l.Group == g }) {
					_, err := s.DescribeGroup(cmd.Context(), g) // the store's error: unknown or invalid
					return err
				}
			}
			for _, g := range groups {
				if err := s.DeleteGroupOffsets(g); err != nil {
					return err
				}
			}
			if err := s.Close(); err != nil {
				return err
			}
			if a.json() {
				return a.writeJSON(map[string][]string{"deleted": groups})
			}
			fmt.Fprintf(a.stdout, "Deletion of requested consumer groups ('%s') was successful.\n", strings.Join(groups, "', '"))
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&groups, "group", nil, "the group to delete (repeat for more)")
	return cmd
}
