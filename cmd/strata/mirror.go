package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/mirror"
	"github.com/stratalog/strata/topic"
)

func init() { commands = append(commands, newMirrorCmd) }

type mirrorFlags struct {
	to, from       string
	topics         []string
	renamePrefix   string
	groups         string
	txnID          string
	noTransactions bool
	compression    string
	replication    int16
	once           bool
	every          time.Duration
	groupInterval  time.Duration
	security       clientSecurity
}

func newMirrorCmd(a *app) *cobra.Command {
	var f mirrorFlags
	cmd := &cobra.Command{
		Use:   "mirror",
		Short: "Copy topics and consumer group offsets to a Kafka cluster",
		Long: `mirror copies topics of the directory to a Kafka cluster (--to): each topic is
created there with the same partition count and configs (Kafka's names), and
each record goes to the same partition number with its key, headers and
timestamp, in order. It reads the directory read-only, so it runs beside the
service that owns it, and copies what a read_committed consumer reads.

Exactly once: each batch is produced in a Kafka transaction together with
the mirror's progress (the offset syncs in the topic strata-mirror.offset-syncs),
so a stopped or crashed mirror resumes where the cluster says it is, without
duplicating or losing a record. A newer mirror with the same
--transactional-id fences an older one. --no-transactions is for a cluster
that refuses transactions: idempotent produce, and at least once (a crash
can copy a batch again).

--groups REGEX translates the committed offsets of the matching groups to the
target's offsets (they differ after compaction and transactions) and commits
them to the group of the same name on the cluster, when it has no active
members there, never backwards: a consumer switched to Kafka resumes at the
record it would have read next.

--topic takes a topic name or a regular expression matching whole names;
repeat it for more. --once copies up to the current end, commits the groups
once and exits; otherwise mirror follows until interrupted, printing the lag
table every --status-interval.

TLS and SASL: --tls (or --tls-ca, and --tls-cert/--tls-key for a client
certificate), --sasl-mechanism PLAIN|SCRAM-SHA-256|SCRAM-SHA-512 with
--sasl-user user:password (or user, and $STRATA_SASL_PASSWORD).

--from copies the other way, from a Kafka cluster into the directory (for
local development, a test fixture, a replay): --topic names the cluster's
topics, each created in the directory with its partition count and the
configs Strata has, each committed record appended to the same partition
with its key, headers and timestamp, in store transactions together with
the progress (the topic strata-pull.progress), so it resumes where it
stopped. It writes the directory: a directory another process holds is exit
status 3.`,
		Example: `  strata mirror --to kafka1:9092,kafka2:9092 --topic orders --once
  strata mirror --to kafka:9092 --topic 'orders\..*' --groups '.*'
  strata mirror --to kafka:9092 --topic orders --rename-prefix strata. -o json --once
  strata mirror --to kafka:9092 --topic orders --no-transactions --compression zstd
  strata mirror --from kafka:9092 --topic orders --once
  STRATA_SASL_PASSWORD=... strata mirror --to kafka:9093 --tls --sasl-mechanism SCRAM-SHA-512 --sasl-user mirror --topic orders`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.from != "" {
				return a.pull(cmd, f)
			}
			opts, err := f.options(a)
			if err != nil {
				return err
			}
			return a.mirror(opts, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.to, "to", "", "the Kafka cluster's bootstrap brokers, host:port[,host:port...]")
	fl.StringVar(&f.from, "from", "", "copy from this Kafka cluster into the directory instead")
	fl.StringArrayVar(&f.topics, "topic", nil, "a topic to copy, or a regular expression of topic names (repeatable)")
	fl.StringVar(&f.renamePrefix, "rename-prefix", "", "put this before each topic's name on the cluster")
	fl.StringVar(&f.groups, "groups", "", "copy the offsets of the consumer groups this regular expression matches")
	fl.StringVar(&f.txnID, "transactional-id", mirror.DefaultTransactionalID, "the mirror's Kafka transactional id: one per mirror")
	fl.BoolVar(&f.noTransactions, "no-transactions", false, "idempotent produce without transactions: at least once")
	fl.StringVar(&f.compression, "compression", "none", "the producer's codec: none, gzip, snappy, lz4 or zstd")
	fl.Int16Var(&f.replication, "replication-factor", -1, "replication factor of the topics created (-1: the cluster's default)")
	fl.BoolVar(&f.once, "once", false, "copy up to the current end, then exit")
	fl.DurationVar(&f.every, "status-interval", 30*time.Second, "while following, print the lag table this often (0: only at exit)")
	fl.DurationVar(&f.groupInterval, "group-interval", mirror.DefaultGroupInterval, "while following, commit group offsets this often")
	f.security.flags(cmd)
	return cmd
}

// options turns the flags into mirror options, refusing bad values with a
// usage error.
func (f mirrorFlags) options(a *app) (mirror.Options, error) {
	var o mirror.Options
	var err error
	if o.Brokers, err = brokerList("--to", f.to); err != nil {
		return o, err
	}
	if len(o.Brokers) == 0 {
		return o, usagef("--to or --from is required: the cluster's bootstrap brokers, host:port[,host:port...]")
	}
	if len(f.topics) == 0 {
		return o, usagef("--topic is required: a topic name or a regular expression of names")
	}
	var patterns []string
	for _, t := range f.topics {
		if topic.ValidateName(t) == nil {
			o.Topics = append(o.Topics, t)
			continue
		}
		if _, err := regexp.Compile(t); err != nil {
			return o, usagef("--topic %q: neither a topic name nor a regular expression: %v", t, err)
		}
		patterns = append(patterns, "(?:"+t+")")
	}
	if len(patterns) > 0 {
		o.TopicPattern = regexp.MustCompile(strings.Join(patterns, "|"))
	}
	if p := f.renamePrefix; p != "" {
		if err := topic.ValidateName(p + "x"); err != nil {
			return o, usagef("--rename-prefix %q: topic names hold only [a-zA-Z0-9._-]", p)
		}
		o.Rename = func(t string) string { return p + t }
	}
	if f.groups != "" {
		re, err := regexp.Compile(f.groups)
		if err != nil {
			return o, usagef("--groups %q: not a regular expression: %v", f.groups, err)
		}
		o.Groups = re
	}
	if f.txnID == "" {
		return o, usagef("--transactional-id must not be empty")
	}
	o.TransactionalID = f.txnID
	o.NoTransactions = f.noTransactions
	switch f.compression {
	case "none", "gzip", "snappy", "lz4", "zstd":
		o.Compression = f.compression
	default:
		return o, usagef("--compression %q: want none, gzip, snappy, lz4 or zstd", f.compression)
	}
	if f.replication == 0 || f.replication < -1 {
		return o, usagef("--replication-factor %d: want -1 (the cluster's default) or 1 or more", f.replication)
	}
	o.ReplicationFactor = f.replication
	if f.every < 0 {
		return o, usagef("--status-interval %v: want 0 or more", f.every)
	}
	if f.groupInterval <= 0 {
		return o, usagef("--group-interval %v: want more than 0", f.groupInterval)
	}
	o.GroupInterval = f.groupInterval
	if o.ClientOptions, err = f.security.options(); err != nil {
		return o, err
	}
	o.Logger = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return o, nil
}

func (a *app) mirror(opts mirror.Options, f mirrorFlags) error {
	s, err := a.openRead()
	if err != nil {
		return err
	}
	defer s.Close()
	m, err := mirror.New(s, opts)
	if err != nil {
		return usageError{err}
	}
	report := func() error { return a.printMirror(s, m, opts) }
	if f.once {
		err = m.Once(a.ctx)
	} else {
		err = a.follow(m, f.every, report)
	}
	if err != nil && len(m.Lag()) == 0 {
		// It stopped before it knew a partition: nothing to show.
	} else if perr := report(); perr != nil && err == nil {
		err = perr
	}
	if errors.Is(err, mirror.ErrInvalidOptions) {
		return usageError{err}
	}
	return err
}

// follow runs m until the command is interrupted, printing the lag every
// interval.
func (a *app) follow(m *mirror.Mirror, every time.Duration, report func() error) error {
	ctx, cancel := context.WithCancel(a.ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case err := <-done:
			return err
		case <-tick:
			if err := report(); err != nil {
				return err
			}
			if !a.json() {
				fmt.Fprintln(a.stdout)
			}
		}
	}
}

type mirrorJSON struct {
	Partitions []mirrorLagJSON   `json:"partitions"`
	Groups     []mirrorGroupJSON `json:"groups"`
	Stats      mirrorStatsJSON   `json:"stats"`
}

type mirrorLagJSON struct {
	Topic       string `json:"topic"`
	TargetTopic string `json:"target_topic"`
	Partition   int    `json:"partition"`
	SourceEnd   int64  `json:"source_end"`
	Mirrored    int64  `json:"mirrored"`
	Lag         int64  `json:"lag"`
	TargetEnd   int64  `json:"target_end"`
	Copied      int64  `json:"copied"`
}

type mirrorGroupJSON struct {
	Group        string `json:"group"`
	Topic        string `json:"topic"`
	TargetTopic  string `json:"target_topic"`
	Partition    int    `json:"partition"`
	SourceOffset int64  `json:"source_offset"`
	TargetOffset int64  `json:"target_offset"`
}

type mirrorStatsJSON struct {
	Transactions int64 `json:"transactions"`
	Records      int64 `json:"records"`
	Retries      int64 `json:"retries"`
	GroupCommits int64 `json:"group_commits"`
	GroupsActive int64 `json:"groups_skipped_active"`
}

// printMirror prints the lag table and, with --groups, each group's
// translated offsets; or all of it as JSON.
func (a *app) printMirror(s *strata.Store, m *mirror.Mirror, opts mirror.Options) error {
	var groups []mirror.GroupOffset
	if re := opts.Groups; re != nil {
		listings, err := s.ListGroups()
		if err != nil {
			return err
		}
		for _, l := range listings {
			if loc := re.FindStringIndex(l.Group); loc != nil && loc[0] == 0 && loc[1] == len(l.Group) {
				groups = append(groups, m.TranslateGroup(l.Group)...)
			}
		}
	}
	if a.json() {
		st := m.Stats()
		out := mirrorJSON{
			Partitions: []mirrorLagJSON{},
			Groups:     []mirrorGroupJSON{},
			Stats: mirrorStatsJSON{Transactions: st.Transactions, Records: st.Records, Retries: st.Retries,
				GroupCommits: st.GroupCommits, GroupsActive: st.GroupsActive},
		}
		for _, l := range m.Lag() {
			out.Partitions = append(out.Partitions, mirrorLagJSON{Topic: l.Topic, TargetTopic: l.TargetTopic,
				Partition: l.Partition, SourceEnd: l.SourceEnd, Mirrored: l.Mirrored, Lag: l.Lag,
				TargetEnd: l.TargetEnd, Copied: l.Copied})
		}
		for _, g := range groups {
			out.Groups = append(out.Groups, mirrorGroupJSON{Group: g.Group, Topic: g.Topic, TargetTopic: g.TargetTopic,
				Partition: g.Partition, SourceOffset: g.Source, TargetOffset: g.Target})
		}
		return a.writeJSON(out)
	}
	if err := a.printLag(m.Lag()); err != nil {
		return err
	}
	if len(groups) > 0 {
		fmt.Fprintln(a.stdout)
		t := newTable(a.stdout, "GROUP", "TOPIC", "TARGET-TOPIC", "PARTITION", "STRATA-OFFSET", "KAFKA-OFFSET")
		for _, g := range groups {
			t.row(g.Group, g.Topic, g.TargetTopic, g.Partition, g.Source, g.Target)
		}
		return t.flush()
	}
	return nil
}

func (a *app) printLag(lag []mirror.PartitionLag) error {
	t := newTable(a.stdout, "TOPIC", "TARGET-TOPIC", "PARTITION", "SOURCE-END", "MIRRORED", "LAG", "TARGET-END", "COPIED")
	for _, l := range lag {
		t.row(l.Topic, l.TargetTopic, l.Partition, l.SourceEnd, l.Mirrored, l.Lag, l.TargetEnd, l.Copied)
	}
	return t.flush()
}

// brokerList parses a flag's host:port[,host:port...].
func brokerList(flag, v string) ([]string, error) {
	var out []string
	for b := range strings.SplitSeq(v, ",") {
		if b = strings.TrimSpace(b); b != "" {
			if !strings.Contains(b, ":") {
				return nil, usagef("%s %q: want host:port", flag, b)
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// pull is mirror --from: the cluster's topics into the directory.
func (a *app) pull(cmd *cobra.Command, f mirrorFlags) error {
	if f.to != "" {
		return usagef("--to and --from: give one")
	}
	for _, name := range []string{"groups", "transactional-id", "no-transactions", "compression", "replication-factor", "group-interval"} {
		if cmd.Flags().Changed(name) {
			return usagef("--%s is for --to, not --from", name)
		}
	}
	brokers, err := brokerList("--from", f.from)
	if err != nil {
		return err
	}
	if len(f.topics) == 0 {
		return usagef("--topic is required: the cluster's topics to copy")
	}
	for _, t := range f.topics {
		if err := topic.ValidateName(t); err != nil {
			return usagef("--topic %q: with --from, a topic name: %v", t, err)
		}
	}
	opts := mirror.PullOptions{Brokers: brokers, Topics: f.topics, Follow: !f.once,
		Logger: slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if opts.ClientOptions, err = f.security.options(); err != nil {
		return err
	}
	if p := f.renamePrefix; p != "" {
		if err := topic.ValidateName(p + "x"); err != nil {
			return usagef("--rename-prefix %q: topic names hold only [a-zA-Z0-9._-]", p)
		}
		opts.Rename = func(t string) string { return p + t }
	}
	s, err := a.openWrite()
	if err != nil {
		return err
	}
	defer s.Close()
	parts, err := mirror.Pull(a.ctx, s, opts)
	if errors.Is(err, mirror.ErrInvalidOptions) {
		return usageError{err}
	}
	if len(parts) > 0 {
		if perr := a.printPulled(parts); perr != nil && err == nil {
			err = perr
		}
	}
	return err
}

type pulledJSON struct {
	Topic       string `json:"topic"`
	TargetTopic string `json:"target_topic"`
	Partition   int    `json:"partition"`
	End         int64  `json:"end"`
	Next        int64  `json:"next"`
	Copied      int64  `json:"copied"`
}

func (a *app) printPulled(parts []mirror.PulledPartition) error {
	if a.json() {
		out := make([]pulledJSON, 0, len(parts))
		for _, p := range parts {
			out = append(out, pulledJSON{Topic: p.Topic, TargetTopic: p.TargetTopic, Partition: p.Partition,
				End: p.End, Next: p.Next, Copied: p.Copied})
		}
		return a.writeJSON(map[string]any{"partitions": out})
	}
	t := newTable(a.stdout, "TOPIC", "TARGET-TOPIC", "PARTITION", "KAFKA-END", "NEXT", "COPIED")
	for _, p := range parts {
		t.row(p.Topic, p.TargetTopic, p.Partition, p.End, p.Next, p.Copied)
	}
	return t.flush()
}
