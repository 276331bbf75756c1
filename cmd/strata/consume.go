package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/stratalog/strata"
)

func init() { commands = append(commands, newConsumeCmd) }

// consumeFlags are consume's flags.
type consumeFlags struct {
	fromBeginning bool
	offset        string
	partition     int
	at            string
	group         string
	commit        bool
	count         int64
	follow        bool
	format        string
	isolation     string
	outputFile    string
	nullMarker    string
}

func newConsumeCmd(a *app) *cobra.Command {
	var f consumeFlags
	cmd := &cobra.Command{
		Use:   "consume TOPIC",
		Short: "Print a topic's records (as kafka-console-consumer, kcat -C)",
		Long: `consume prints a topic's records, of every partition or of --partition, from
the start offset each partition has when the command starts (as kcat; Kafka's
console consumer starts at the end unless --from-beginning), or from --offset,
--time, or the position --group committed, up to the end each partition had
when the command started, or --count records; --follow waits for new records
until interrupted (Ctrl-C), in the partitions the topic gains too. Without
--follow the partitions are printed one after another; with it, as their
records come.

The output is each record's value on a line of its own, or as --format says
(kcat's -f), or, with -o json, one JSON object a line: topic, partition,
offset, timestamp, key, value and headers (a key or value that is not UTF-8
in base64, marked by key_encoding or value_encoding). --format's verbs:

  %t topic       %p partition   %o offset      %T timestamp (ms)
  %k key         %s value       %K key length  %S value length (-1: null)
  %h headers (k=v,k=v)          %% a percent sign
  escapes: \n \r \t \\ \xHH

A damaged batch where a partition's readable records end fails the command
with its file and position; legacy messages (magic 0 and 1, before Kafka
0.11), which strata keeps but does not read, are skipped with a warning, and
so are records the directory's owner deletes (retention, delete-records)
before consume reads them: it goes on at the new start.

consume only reads, so it works on a directory a running process holds,
following what that process appends; with --group and --commit it commits
the group's offsets as it goes, which is a write, refused on such a
directory.`,
		Example: `  strata consume orders
  strata consume orders --partition 0 --offset 42 -n 10
  strata consume orders --offset -10                # the last 10 of each partition
  strata consume orders --time 2026-05-01T12:00:00Z
  strata consume orders --format '%p/%o %k=%s\n'
  strata consume orders -o json | jq .value
  strata consume orders --group billing --commit --follow
  strata consume orders --output-file orders.txt`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("partition") {
				f.partition = -1
			}
			return a.consume(args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.fromBeginning, "from-beginning", false, "start at each partition's start offset (the default without --group)")
	fl.StringVar(&f.offset, "offset", "", "start at: beginning, end, an offset N, or -N, N before the end")
	fl.IntVarP(&f.partition, "partition", "p", -1, "read only this partition (default every partition)")
	fl.StringVar(&f.at, "time", "", "start at the first record at or after this time: RFC 3339 or milliseconds since 1970")
	fl.StringVarP(&f.group, "group", "g", "", "start at the offsets this consumer group committed (the start offset where it has none)")
	fl.BoolVar(&f.commit, "commit", false, "with --group, commit the group's offsets as the records are printed")
	fl.Int64VarP(&f.count, "count", "n", 0, "stop after this many records (default every record)")
	fl.Int64Var(&f.count, "max-messages", 0, "the same as --count (kafka-console-consumer's name)")
	fl.BoolVarP(&f.follow, "follow", "f", false, "wait for new records until interrupted")
	fl.StringVar(&f.format, "format", "", "print each record as this format says (kcat's -f)")
	fl.StringVar(&f.isolation, "isolation", "read_uncommitted", "read_uncommitted, or read_committed: only committed transactions' records")
	fl.StringVar(&f.outputFile, "output-file", "", "write the records to this file, not stdout")
	fl.StringVar(&f.nullMarker, "null-marker", "", "with --format, write a null key or value as this")
	return cmd
}

// startSpec is where consume starts on each partition.
type startSpec struct {
	kind   byte // 'b' beginning, 'e' end, 'o' offset, 'r' relative to the end, 't' time, 'g' group
	offset int64
	at     time.Time
}

func parseStart(f consumeFlags) (startSpec, error) {
	n := 0
	for _, set := range []bool{f.fromBeginning, f.offset != "", f.at != ""} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return startSpec{}, usagef("--from-beginning, --offset and --time: give one")
	case f.group != "" && (f.offset != "" || f.at != ""):
		return startSpec{}, usagef("--group starts at the group's committed offsets: no --offset or --time with it (reset them with strata groups reset-offsets)")
	case f.commit && f.group == "":
		return startSpec{}, usagef("--commit needs --group")
	case f.group != "":
		return startSpec{kind: 'g'}, nil
	case f.at != "":
		if ms, err := strconv.ParseInt(f.at, 10, 64); err == nil && ms >= 0 {
			return startSpec{kind: 't', at: time.UnixMilli(ms)}, nil
		}
		t, err := time.Parse(time.RFC3339Nano, f.at)
		if err != nil {
			return startSpec{}, usagef("--time %q: want RFC 3339 (2026-05-01T12:00:00Z) or milliseconds since 1970", f.at)
		}
		return startSpec{kind: 't', at: t}, nil
	}
	switch f.offset {
	case "", "beginning", "earliest":
		return startSpec{kind: 'b'}, nil
	case "end", "latest":
		return startSpec{kind: 'e'}, nil
	}
	o, err := strconv.ParseInt(f.offset, 10, 64)
	if err != nil {
		return startSpec{}, usagef("--offset %q: want beginning, end, an offset N, or -N (N before the end)", f.offset)
	}
	if o < 0 {
		return startSpec{kind: 'r', offset: -o}, nil
	}
	return startSpec{kind: 'o', offset: o}, nil
}

// consumer is one consume run.
type consumer struct {
	a      *app
	s      *strata.Store
	view   strata.View
	topic  string
	f      consumeFlags
	format *recordFormat
	out    *bufio.Writer
	buf    []byte
	n      int64 // records written
	// next is, per partition read, the offset after the last record
	// written; dirty marks those not committed yet.
	next  map[int]int64
	dirty map[int]bool
	bar   *progress
}

func (a *app) consume(topicName string, f consumeFlags) error {
	switch topicName {
	case strata.ConsumerOffsetsTopic:
		return usagef("%s is the store's own topic, which consume does not read: strata dump --offsets-decoder %s-0/*.log decodes it", topicName, filepath.Join(a.dir, topicName))
	case strata.TransactionStateTopic:
		return usagef("%s is the store's own topic, which consume does not read: strata dump --transaction-log-decoder %s-0/*.log decodes it", topicName, filepath.Join(a.dir, topicName))
	}
	spec, err := parseStart(f)
	if err != nil {
		return err
	}
	if f.count < 0 {
		return usagef("--count %d: at least 1 (0: every record)", f.count)
	}
	var iso strata.Isolation
	switch f.isolation {
	case "read_uncommitted":
		iso = strata.ReadUncommitted
	case "read_committed":
		iso = strata.ReadCommitted
	default:
		return usagef("--isolation %q: read_uncommitted or read_committed", f.isolation)
	}
	var format *recordFormat
	if f.format != "" {
		if a.json() {
			return usagef("--format and -o json: give one")
		}
		rf, err := parseFormat(f.format)
		if err != nil {
			return err
		}
		rf.null = f.nullMarker
		format = &rf
	}
	open := a.openRead
	if f.commit {
		open = a.openWrite
	}
	s, err := open()
	if err != nil {
		return err
	}
	defer s.Close()
	d, err := s.DescribeTopic(topicName)
	if err != nil {
		return err
	}
	parts := make([]int, len(d.Partitions))
	for i := range parts {
		parts[i] = i
	}
	if f.partition != -1 {
		if f.partition < 0 || f.partition >= len(parts) {
			return usagef("--partition %d: topic %s has partitions [0, %d)", f.partition, topicName, len(parts))
		}
		parts = []int{f.partition}
	}
	c := &consumer{a: a, s: s, view: s.View(iso), topic: topicName, f: f, format: format,
		next: map[int]int64{}, dirty: map[int]bool{}}
	starts, ends := make([]int64, len(parts)), make([]int64, len(parts))
	var total int64
	for i, p := range parts {
		if starts[i], err = c.startOffset(p, spec); err != nil {
			return err
		}
		if ends[i], err = c.view.ListOffsets(topicName, p, strata.Latest); err != nil {
			return err
		}
		total += max(0, ends[i]-starts[i])
	}
	w := a.stdout
	if f.outputFile != "" {
		file, err := os.Create(f.outputFile)
		if err != nil {
			return usageError{err}
		}
		defer file.Close()
		w = file
		if !f.follow {
			if f.count > 0 {
				total = min(total, f.count)
			}
			c.bar = a.newProgress("consume", total, "records")
		}
	}
	c.out = bufio.NewWriterSize(w, 256<<10)
	if f.follow {
		err = c.follow(parts, starts)
	} else {
		err = c.scan(parts, starts, ends)
	}
	if ferr := c.out.Flush(); err == nil {
		err = ferr
	}
	if cerr := c.commitDirty(); err == nil {
		err = cerr
	}
	if c.bar != nil {
		if err == nil && (f.count == 0 || c.n == f.count) {
			// Done: the records the offsets counted and compaction or
			// aborted transactions left out are done too.
			c.bar.add(c.bar.total - c.bar.done)
		}
		c.bar.finish()
	}
	if f.outputFile != "" {
		word := "records"
		if c.n == 1 {
			word = "record"
		}
		fmt.Fprintf(a.stderr, "consumed %d %s of %s to %s\n", c.n, word, topicName, f.outputFile)
	}
	if err != nil {
		return err
	}
	return s.Close()
}

// startOffset returns where consume starts on partition p.
func (c *consumer) startOffset(p int, spec startSpec) (int64, error) {
	start, err := c.view.ListOffsets(c.topic, p, strata.Earliest)
	if err != nil {
		return 0, err
	}
	end, err := c.view.ListOffsets(c.topic, p, strata.Latest)
	if err != nil {
		return 0, err
	}
	switch spec.kind {
	case 'e':
		return end, nil
	case 'o':
		if spec.offset > end || spec.offset < start {
			return 0, fmt.Errorf("--offset %d of %s-%d out of range [%d, %d]: %w", spec.offset, c.topic, p, start, end, strata.ErrOffsetOutOfRange)
		}
		return spec.offset, nil
	case 'r':
		return max(start, end-spec.offset), nil
	case 't':
		o, err := c.view.ListOffsets(c.topic, p, strata.AtTime(spec.at))
		if err != nil {
			return 0, err
		}
		if o < 0 {
			return end, nil // no record at or after the time
		}
		return o, nil
	case 'g':
		if om, ok := c.s.Committed(c.f.group, c.topic, p); ok {
			return min(max(om.Offset, start), end), nil
		}
	}
	return start, nil
}

// write writes one record and counts it; it reports whether to go on.
func (c *consumer) write(p int, r *strata.Record) (bool, error) {
	switch {
	case c.format != nil:
		c.buf = c.format.appendRecord(c.buf[:0], c.topic, p, r)
	case c.a.json():
		c.buf = appendRecordJSON(c.buf[:0], c.topic, p, r)
	default:
		c.buf = append(append(c.buf[:0], r.Value...), '\n')
	}
	if _, err := c.out.Write(c.buf); err != nil {
		return false, err
	}
	c.n++
	c.next[p] = r.Offset + 1
	c.dirty[p] = true
	if c.bar != nil {
		c.bar.add(1)
	}
	return c.f.count == 0 || c.n < c.f.count, nil
}

// scan writes each partition's records, one partition after another, up
// to the end it had when the command started.
func (c *consumer) scan(parts []int, starts, ends []int64) error {
	for i, p := range parts {
		for at := starts[i]; at < ends[i]; {
			legacy, removed := false, false
			for r, err := range c.view.Scan(c.topic, p, at) {
				if errors.Is(err, strata.ErrUnsupportedFormat) {
					legacy = true
					break
				}
				if start, ok := c.removedUnder(p, at, err); ok {
					c.warnRemoved(p, at, start)
					at, removed = start, true
					break
				}
				if err != nil {
					return err
				}
				if r.Offset >= ends[i] {
					break
				}
				if c.a.ctx.Err() != nil {
					return nil // interrupted: what was written stays
				}
				more, err := c.write(p, &r)
				if err != nil || !more {
					return err
				}
				at = r.Offset + 1
			}
			if removed {
				continue
			}
			if !legacy {
				break
			}
			next, err := c.skipLegacy(p, at, ends[i])
			if err != nil {
				return err
			}
			at = next
		}
		// A damaged batch where the partition's records end ends them
		// in a read-only view: a read there tells it from the end.
		if _, err := c.view.Read(c.a.ctx, c.topic, p, ends[i], 1); err != nil && !errors.Is(err, strata.ErrOffsetOutOfRange) && c.a.ctx.Err() == nil {
			return err
		}
		if err := c.commitDirty(); err != nil {
			return err
		}
	}
	return nil
}

// skipLegacy steps over the legacy messages (magic 0 and 1, before Kafka
// 0.11) of partition p from offset at, which the store keeps but does not
// read, saying so on stderr: it returns the offset of the first record
// after them that reads, or end.
func (c *consumer) skipLegacy(p int, at, end int64) (int64, error) {
	next := end
	for o := at + 1; o < end; o++ {
		recs, err := c.view.Read(c.a.ctx, c.topic, p, o, 1)
		if errors.Is(err, strata.ErrUnsupportedFormat) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if len(recs) > 0 {
			next = min(recs[0].Offset, end)
		}
		break
	}
	fmt.Fprintf(c.a.stderr, "strata: warning: %s-%d: offsets %d to %d are legacy messages (magic 0 or 1, before Kafka 0.11), which strata does not read: skipped\n",
		c.topic, p, at, next-1)
	return next, nil
}

// fetched is a record a follower read, or its error.
type fetched struct {
	p   int
	r   strata.Record
	err error
	// gone, when gone[1] > 0, is the offsets [gone[0], gone[1]) that
	// retention or delete-records removed before they were read.
	gone [2]int64
}

// removedUnder reports whether err is the out-of-range error of a read
// at offset from of partition p whose records the directory's owner
// removed meanwhile (retention, delete-records): then the reading goes
// on at the partition's new start, which it returns, as a Kafka consumer
// with auto.offset.reset=earliest does.
func (c *consumer) removedUnder(p int, from int64, err error) (int64, bool) {
	if !errors.Is(err, strata.ErrOffsetOutOfRange) {
		return 0, false
	}
	start, lerr := c.view.ListOffsets(c.topic, p, strata.Earliest)
	if lerr != nil || start <= from {
		return 0, false
	}
	return start, true
}

// warnRemoved says on stderr that offsets [from, to) of partition p were
// removed before consume read them.
func (c *consumer) warnRemoved(p int, from, to int64) {
	fmt.Fprintf(c.a.stderr, "strata: warning: %s-%d: offsets %d to %d were deleted (retention, delete-records) before they were read: going on at %d\n",
		c.topic, p, from, to-1, to)
}

// follow writes the partitions' records as they come, until interrupted
// or --count records. Following every partition, it follows those the
// topic gains too, from their start.
func (c *consumer) follow(parts []int, starts []int64) error {
	ctx, cancel := context.WithCancel(c.a.ctx)
	defer cancel()
	ch := make(chan fetched, 1024)
	follow := func(p int, from int64) {
		go func() {
			for {
				var gone fetched
				for r, err := range c.view.Records(ctx, c.topic, p, from) {
					if start, ok := c.removedUnder(p, from, err); ok {
						gone = fetched{p: p, gone: [2]int64{from, start}}
						from = start
						break
					}
					if err == nil {
						r = copyRecord(r)
						from = r.Offset + 1
					}
					select {
					case ch <- fetched{p: p, r: r, err: err}:
					case <-ctx.Done():
						return
					}
					if err != nil {
						return
					}
				}
				if gone.gone[1] == 0 {
					return
				}
				select {
				case ch <- gone:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	for i, p := range parts {
		follow(p, starts[i])
	}
	var grown <-chan time.Time
	if c.f.partition == -1 {
		tick := time.NewTicker(partitionsCheck)
		defer tick.Stop()
		grown = tick.C
	}
	known := len(parts)
	lastCommit := time.Now()
	for ctx.Err() == nil {
		var got fetched
		select {
		case got = <-ch:
		default:
			// Caught up: show what was written, and commit it.
			if err := c.out.Flush(); err != nil {
				return err
			}
			if c.f.commit && time.Since(lastCommit) >= time.Second {
				if err := c.commitDirty(); err != nil {
					return err
				}
				lastCommit = time.Now()
			}
			select {
			case got = <-ch:
			case <-grown:
				d, err := c.s.DescribeTopic(c.topic)
				if err != nil {
					return err
				}
				for ; known < len(d.Partitions); known++ {
					follow(known, d.Partitions[known].StartOffset)
				}
				continue
			case <-ctx.Done():
				return nil
			}
		}
		if got.gone[1] > 0 {
			c.warnRemoved(got.p, got.gone[0], got.gone[1])
			continue
		}
		if got.err != nil {
			if errors.Is(got.err, context.Canceled) || ctx.Err() != nil {
				return nil // interrupted
			}
			return got.err
		}
		more, err := c.write(got.p, &got.r)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// partitionsCheck is how often consume --follow looks for partitions the
// topic gained.
const partitionsCheck = 200 * time.Millisecond

// commitDirty commits, with --commit, the offsets after the records
// written.
func (c *consumer) commitDirty() error {
	if !c.f.commit {
		return nil
	}
	for p := range c.dirty {
		if err := c.s.Commit(c.f.group, c.topic, p, c.next[p], ""); err != nil {
			return err
		}
		delete(c.dirty, p)
	}
	return nil
}

// copyRecord copies what r holds of its batch, which a Records iterator
// reuses.
func copyRecord(r strata.Record) strata.Record {
	r.Key = cloneBytes(r.Key)
	r.Value = cloneBytes(r.Value)
	if r.Headers != nil {
		hs := make([]strata.Header, len(r.Headers))
		for i, h := range r.Headers {
			hs[i] = strata.Header{Key: strings.Clone(h.Key), Value: cloneBytes(h.Value)}
		}
		r.Headers = hs
	}
	return r
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
