package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/topic"
)

func init() { commands = append(commands, newProduceCmd) }

// produceFlags are produce's flags.
type produceFlags struct {
	file       string
	keySep     string
	headers    []string
	parseHdrs  bool
	partition  int
	codec      string
	level      int
	nullMarker string
	batch      int
	properties []string
}

func newProduceCmd(a *app) *cobra.Command {
	var f produceFlags
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Append records read from stdin or a file, one per line (as kafka-console-producer, kcat -P)",
		Long: `produce appends a record for each line of stdin (or of --file), the line
without its line ending as the value. With --key-separator, the text before the
first separator is the key and the rest the value (kafka-console-producer's
parse.key and key.separator, kcat's -K). --header adds a header to every record;
with --parse-headers each line starts with its own, k1:v1,k2:v2 and a tab
(kafka-console-producer's parse.headers).

A keyed record goes to the partition Kafka's producer would choose,
murmur2(key) % partitions; records without a key go to one partition per batch,
which moves from batch to batch (Kafka's sticky partitioner); --partition sends
every record to one partition.

produce gathers the lines into batches of up to --batch-size records (and the
topic's max.message.bytes), one per partition, each appended as one Kafka
record batch compressed with --compression (on a topic whose compression.type
is producer; a topic that names a codec re-encodes the batch in its own), so
a large input streams through in little memory. A summary goes to stderr; a
progress bar too, on a terminal, for a --file.`,
		Example: `  echo hello | strata produce orders
  printf 'k1:v1\nk2:v2\n' | strata produce orders --key-separator :
  strata produce orders --file events.txt --compression zstd
  strata produce orders --partition 2 --header source=cli --header trace=abc
  printf 'trace:abc\tk1:v1\n' | strata produce orders --parse-headers -K :
  printf 'user1:NULL\n' | strata produce users --key-separator : --null-marker NULL   # a tombstone
  strata produce orders --property parse.key=true --property key.separator=:`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("partition") {
				f.partition = -1
			}
			sep, err := unescapeSep(f.keySep)
			if err != nil {
				return err
			}
			f.keySep = sep
			if err := f.applyProperties(); err != nil {
				return err
			}
			return a.produce(args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "file", "f", "", "read the records from this file, not stdin")
	fl.StringVarP(&f.keySep, "key-separator", "K", "", "split each line into key and value at the first SEP, with kcat's escapes \\t \\n \\r \\\\ \\xHH (default: no key)")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "a header for every record, key=value (repeatable)")
	fl.BoolVar(&f.parseHdrs, "parse-headers", false, "each line starts with its headers, k1:v1,k2:v2, and a tab (kafka-console-producer's parse.headers)")
	fl.IntVarP(&f.partition, "partition", "p", -1, "append every record to this partition (default: Kafka's partitioner)")
	fl.StringVarP(&f.codec, "compression", "z", "none", "compress the batches: none, gzip, snappy, lz4 or zstd")
	fl.IntVar(&f.level, "compression-level", 0, "the codec's level (gzip 1-9, lz4 1-17, zstd -131072-22; default the codec's own)")
	fl.StringVar(&f.nullMarker, "null-marker", "", "a key or value equal to this is null (no key; a tombstone value)")
	fl.IntVar(&f.batch, "batch-size", 1000, "the most records in one batch")
	fl.StringArrayVar(&f.properties, "property", nil, "kafka-console-producer's reader properties: parse.key, key.separator, parse.headers, null.marker (repeatable)")
	return cmd
}

// unescapeSep reads --key-separator's escapes, as kcat reads -K's: \t, \n,
// \r, \\ and \xHH; any other backslash is itself.
func unescapeSep(sep string) (string, error) {
	if !strings.Contains(sep, `\`) {
		return sep, nil
	}
	var b strings.Builder
	for i := 0; i < len(sep); i++ {
		c := sep[i]
		if c != '\\' || i+1 == len(sep) {
			b.WriteByte(c)
			continue
		}
		i++
		switch sep[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		case 'x':
			if i+2 >= len(sep) {
				return "", usagef("--key-separator %q: \\x wants two hex digits", sep)
			}
			n, err := strconv.ParseUint(sep[i+1:i+3], 16, 8)
			if err != nil {
				return "", usagef("--key-separator %q: \\x%s is not two hex digits", sep, sep[i+1:i+3])
			}
			b.WriteByte(byte(n))
			i += 2
		default:
			b.WriteByte('\\')
			b.WriteByte(sep[i])
		}
	}
	return b.String(), nil
}

// applyProperties takes kafka-console-producer's --property settings of
// its line reader (LineMessageReader) that produce has flags for:
// parse.key (with key.separator, default a tab), parse.headers and
// null.marker. A flag given too wins.
func (f *produceFlags) applyProperties() error {
	parseKey, sep := false, "\t"
	for _, kv := range f.properties {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return usagef("--property %q: want name=value", kv)
		}
		var err error
		switch k {
		case "parse.key":
			parseKey, err = strconv.ParseBool(v)
		case "parse.headers":
			f.parseHdrs, err = strconv.ParseBool(v)
		case "key.separator":
			sep = v
		case "null.marker":
			if f.nullMarker == "" {
				f.nullMarker = v
			}
		default:
			return usagef("--property %q: produce takes parse.key, key.separator, parse.headers and null.marker", kv)
		}
		if err != nil {
			return usagef("--property %q: want true or false", kv)
		}
	}
	if parseKey && f.keySep == "" {
		f.keySep = sep
	}
	return nil
}

// producer is one produce run: the pending batch of each partition, and
// what was appended.
type producer struct {
	a        *app
	s        *strata.Store
	topic    string
	opts     log.BatchOptions
	maxBytes int // the most bytes a batch may take, before compression
	maxRecs  int
	policy   strata.CleanupPolicy
	parts    int
	fixed    int // --partition, or -1
	sticky   *topic.StickyPartitioner
	pending  []pendingBatch
	buf      []byte // the encoded batch
	// Per partition: records appended, first and last offsets.
	counts       []int64
	first, last  []int64
	records      int64
	pendingBytes int
}

type pendingBatch struct {
	recs []strata.Record
	size int // estimated encoded size
}

// produceLinger is how long records read wait for more input after the
// input paused, before they are appended (as a Kafka producer's
// linger.ms), so that lines typed on a terminal are appended as they are
// typed, and a fast pipe still fills its batches.
const produceLinger = 10 * time.Millisecond

// recordOverhead bounds what a record takes in a batch beyond its fields:
// its length, attributes, timestamp and offset deltas (varints).
const recordOverhead = 5 + 1 + 10 + 5

// maxPendingBytes bounds what the pending batches of all partitions hold
// together; past it they are all appended.
const maxPendingBytes = 64 << 20

func (a *app) produce(topicName string, f produceFlags) error {
	codec, ok := topic.CompressionType(f.codec).Codec()
	if !ok {
		return usagef("--compression %q: the codecs are none, gzip, snappy, lz4 and zstd", f.codec)
	}
	if err := log.CheckLevel(codec, f.level); err != nil {
		return usagef("--compression-level %d: %v", f.level, err)
	}
	if f.batch < 1 {
		return usagef("--batch-size %d: at least 1", f.batch)
	}
	var headers []strata.Header
	for _, h := range f.headers {
		k, v, ok := strings.Cut(h, "=")
		if !ok {
			return usagef("--header %q: want key=value", h)
		}
		headers = append(headers, strata.Header{Key: k, Value: []byte(v)})
	}
	in, size := a.stdin, int64(0)
	if f.file != "" {
		file, err := os.Open(f.file)
		if err != nil {
			return usageError{err}
		}
		defer file.Close()
		if st, err := file.Stat(); err == nil {
			size = st.Size()
		}
		in = file
	}
	s, err := a.openWrite()
	if err != nil {
		return err
	}
	defer s.Close()
	d, err := s.DescribeTopic(topicName)
	if err != nil {
		return err
	}
	if topic.IsInternal(topicName) {
		return fmt.Errorf("topic %q is the store's own: %w", topicName, strata.ErrReservedTopic)
	}
	n := len(d.Partitions)
	if f.partition >= n || f.partition < -1 {
		return usagef("--partition %d: topic %s has partitions [0, %d)", f.partition, topicName, n)
	}
	p := &producer{
		a: a, s: s, topic: topicName,
		opts:     log.BatchOptions{Compression: codec, CompressionLevel: f.level},
		maxBytes: d.Config.MaxBatchBytes,
		maxRecs:  f.batch,
		policy:   d.Config.CleanupPolicy,
		parts:    n,
		fixed:    f.partition,
		sticky:   topic.NewStickyPartitioner(0),
		pending:  make([]pendingBatch, n),
		counts:   make([]int64, n),
		first:    make([]int64, n),
		last:     make([]int64, n),
	}
	bar := (*progress)(nil)
	if f.file != "" {
		bar = a.newProgress("produce", size, "bytes")
	}
	lines := readLines(in, p.maxBytes)
	interrupted := false
	var readErr error
	// linger is set when the input paused with records pending: they are
	// appended if it stays paused for produceLinger.
	var linger <-chan time.Time
loop:
	for {
		select {
		case <-linger:
			linger = nil
			if err := p.flushAll(); err != nil {
				return err
			}
		case <-a.ctx.Done():
			interrupted = true
			break loop
		case c, ok := <-lines:
			if !ok {
				break loop
			}
			if c.err != nil {
				readErr = c.err
				break loop
			}
			if err := p.addChunk(c, f, headers); err != nil {
				readErr = err
				break loop
			}
			if bar != nil {
				bar.add(int64(c.bytes))
			}

			if c.idle && linger == nil && p.pendingBytes > 0 {
				// The input has nothing more for now (a terminal, a
				// slow pipe): append what it gave, unless more comes
				// soon.
				linger = time.After(produceLinger)
			}
		}
	}
	if err := p.flushAll(); err != nil {
		return err
	}
	if bar != nil {
		bar.finish()
	}
	if err := p.summary(interrupted); err != nil {
		return err
	}
	if readErr != nil {
		return readErr
	}
	return s.Close()
}

// addChunk adds a chunk's lines to their partitions' batches, appending
// the batches that fill.
func (p *producer) addChunk(c chunk, f produceFlags, headers []strata.Header) error {
	for i, line := range c.lines {
		r := strata.Record{Value: line, Headers: headers}
		if f.parseHdrs {
			var err error
			if r.Headers, line, err = lineHeaders(line, headers, f.nullMarker); err != nil {
				return usagef("line %d: %v", c.first+int64(i), err)
			}
			r.Value = line
		}
		if f.keySep != "" {
			k, v, ok := bytes.Cut(line, []byte(f.keySep))
			if !ok {
				return usagef("line %d: no key separator %q (every line is key%svalue with --key-separator)", c.first+int64(i), f.keySep, f.keySep)
			}
			r.Key, r.Value = k, v
			if f.nullMarker != "" && string(k) == f.nullMarker {
				r.Key = nil
			}
		}
		if f.nullMarker != "" && string(r.Value) == f.nullMarker {
			r.Value = nil
		}
		if r.Key == nil && p.policy.Compacts() {
			return fmt.Errorf("line %d: a record without a key for %s, whose cleanup.policy is %s (give --key-separator): %w",
				c.first+int64(i), p.topic, p.policy, strata.ErrNoKey)
		}
		size := log.RecordFieldsSize(&r) + recordOverhead
		if log.BatchHeaderSize+size > p.maxBytes {
			return fmt.Errorf("line %d: a record of %d bytes is over the topic's max.message.bytes (%d): %w",
				c.first+int64(i), log.BatchHeaderSize+size, p.maxBytes, strata.ErrBatchTooLarge)
		}
		part := p.fixed
		switch {
		case part >= 0:
		case r.Key != nil:
			part = topic.KeyPartition(r.Key, p.parts)
		default:
			part = p.sticky.Partition(p.parts)
		}
		b := &p.pending[part]
		for len(b.recs) > 0 && (b.size+size > p.maxBytes || len(b.recs) >= p.maxRecs) {
			if err := p.flush(part); err != nil {
				return err
			}
			if r.Key == nil && p.fixed < 0 {
				// A new batch: the sticky partition has moved on.
				part = p.sticky.Partition(p.parts)
				b = &p.pending[part]
			}
		}
		if len(b.recs) == 0 {
			b.size = log.BatchHeaderSize
		}
		b.recs = append(b.recs, r)
		b.size += size
		p.pendingBytes += size
	}
	if p.pendingBytes > maxPendingBytes {
		return p.flushAll()
	}
	return nil
}

// flush appends partition part's pending batch.
func (p *producer) flush(part int) error {
	b := &p.pending[part]
	if len(b.recs) == 0 {
		return nil
	}
	var err error
	p.opts.Now = time.Now().UnixMilli()
	p.buf, err = log.EncodeBatch(p.buf[:0], b.recs, p.opts)
	if err != nil {
		return err
	}
	// A record in flight is appended even after SIGINT: the context
	// stops the reading, not the append of what was read.
	base, _, err := p.s.AppendBatch(context.Background(), p.topic, part, p.buf)
	if err != nil {
		return fmt.Errorf("%w (%d records were appended before)", err, p.records)
	}
	n := int64(len(b.recs))
	if p.counts[part] == 0 {
		p.first[part] = base
	}
	p.counts[part] += n
	p.last[part] = base + n - 1
	p.records += n
	p.pendingBytes -= b.size - log.BatchHeaderSize
	clear(b.recs)
	b.recs, b.size = b.recs[:0], 0
	if p.fixed < 0 && p.sticky.Partition(p.parts) == part {
		p.sticky.NextBatch(p.parts)
	}
	return nil
}

func (p *producer) flushAll() error {
	for part := range p.pending {
		if err := p.flush(part); err != nil {
			return err
		}
	}
	p.pendingBytes = 0
	return nil
}

// summary says what was appended: on stderr, and with -o json as JSON on
// stdout.
func (p *producer) summary(interrupted bool) error {
	type partJSON struct {
		Partition   int   `json:"partition"`
		Records     int64 `json:"records"`
		FirstOffset int64 `json:"first_offset"`
		LastOffset  int64 `json:"last_offset"`
	}
	out := struct {
		Topic       string     `json:"topic"`
		Records     int64      `json:"records"`
		Partitions  []partJSON `json:"partitions"`
		Interrupted bool       `json:"interrupted,omitempty"`
	}{Topic: p.topic, Records: p.records, Partitions: []partJSON{}, Interrupted: interrupted}
	var parts []string
	for i, n := range p.counts {
		if n > 0 {
			out.Partitions = append(out.Partitions, partJSON{i, n, p.first[i], p.last[i]})
			parts = append(parts, fmt.Sprintf("%d (offsets %d-%d)", i, p.first[i], p.last[i]))
		}
	}
	if p.a.json() {
		if err := p.a.writeJSON(out); err != nil {
			return err
		}
	}
	word := "records"
	if p.records == 1 {
		word = "record"
	}
	msg := fmt.Sprintf("produced %d %s to %s", p.records, word, p.topic)
	if len(parts) > 0 {
		msg += ", partition " + strings.Join(parts, ", ")
	}
	if interrupted {
		msg += " (interrupted)"
	}
	_, err := fmt.Fprintln(p.a.stderr, msg)
	return err
}
