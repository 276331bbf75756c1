// Package metrics exports a strata.Store's figures to Prometheus: a
// prometheus.Collector to register with a registry, as an embedding
// application does next to its own metrics, or as strata serve does for
// its /metrics endpoint.
//
// Per partition (labels topic and partition) it exports the log start and
// end offsets, the size and number of segments, and counters of what was
// appended, fetched, fsynced and rolled since the store opened (rates are
// PromQL's rate() over them), with the names of Kafka's own metrics where
// Kafka has one (kafka.log:type=Log,name=LogEndOffset,
// name=LogStartOffset, name=Size, name=NumLogSegments). Per consumer group
// and partition (labels group, topic and partition) it exports the
// committed offset, the lag and the age of the oldest record the group has
// not consumed: the figures kafka-consumer-groups --describe prints.
//
// A scrape reads the store's counters (atomic loads) and describes each
// group (Store.DescribeGroup), which reads, per partition the group lags
// behind on, the record at its committed offset: it never takes a
// partition's append lock, so it never holds up an append. On a read-only
// store (Options.ReadOnly) the groups' figures follow the commits of the
// process that owns the directory.
package metrics

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratalog/strata"
)

// Options configure a Collector. The zero value (or nil) means every
// default.
type Options struct {
	// Now is the clock the oldest unconsumed record's age is measured
	// against. Default time.Now; give the store's Options.Now when it has
	// one of its own.
	Now func() time.Time
	// NoGroups leaves out the consumer groups' figures: only the
	// partitions' are exported.
	NoGroups bool
}

// Collector is a prometheus.Collector of a Store's figures. Its methods
// are safe for concurrent use. A scrape of a Store that has been closed
// fails (an invalid metric: ErrClosed).
type Collector struct {
	store *strata.Store
	now   func() time.Time
	// groups says whether to export the groups' figures.
	groups bool
}

// NewCollector returns a Collector of s's figures, to register with a
// prometheus.Registerer.
func NewCollector(s *strata.Store, opts *Options) *Collector {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Collector{store: s, now: o.Now, groups: !o.NoGroups}
}

// The metrics' descriptions, by the names they are exported under.
var (
	partitionLabels = []string{"topic", "partition"}
	groupLabels     = []string{"group", "topic", "partition"}

	logStartOffset = prometheus.NewDesc("strata_partition_log_start_offset",
		"The partition's first retained offset (Kafka's LogStartOffset).", partitionLabels, nil)
	logEndOffset = prometheus.NewDesc("strata_partition_log_end_offset",
		"The partition's end offset: the next offset to be assigned, the end of what readers see (Kafka's LogEndOffset).", partitionLabels, nil)
	sizeBytes = prometheus.NewDesc("strata_partition_size_bytes",
		"Bytes of the partition's .log files (Kafka's Size).", partitionLabels, nil)
	segments = prometheus.NewDesc("strata_partition_segments",
		"The partition's segments (Kafka's NumLogSegments).", partitionLabels, nil)
	appendedBatches = prometheus.NewDesc("strata_partition_appended_batches_total",
		"Batches appended to the partition since the store opened.", partitionLabels, nil)
	appendedRecords = prometheus.NewDesc("strata_partition_appended_records_total",
		"Records appended to the partition since the store opened (Kafka's MessagesInPerSec).", partitionLabels, nil)
	appendedBytes = prometheus.NewDesc("strata_partition_appended_bytes_total",
		"Batch bytes appended to the partition since the store opened (Kafka's BytesInPerSec).", partitionLabels, nil)
	fetches = prometheus.NewDesc("strata_partition_fetches_total",
		"Batch reads of the partition that returned data since the store opened: Kafka Fetch requests served over the wire, ReadBatches and PinBatches.", partitionLabels, nil)
	fetchedBytes = prometheus.NewDesc("strata_partition_fetched_bytes_total",
		"Batch bytes those reads returned (Kafka's BytesOutPerSec).", partitionLabels, nil)
	fsyncs = prometheus.NewDesc("strata_partition_fsyncs_total",
		"Fsyncs of the partition's appended data since the store opened (one group commit counts once).", partitionLabels, nil)
	rolls = prometheus.NewDesc("strata_partition_rolls_total",
		"Segment rolls of the partition since the store opened.", partitionLabels, nil)

	groupCommitted = prometheus.NewDesc("strata_group_committed_offset",
		"The group's committed offset on the partition: the next offset it reads.", groupLabels, nil)
	groupLag = prometheus.NewDesc("strata_group_lag",
		"Records of the partition the group has not consumed: the end offset less the committed offset (from the start offset if the commit fell below it).", groupLabels, nil)
	groupOldestAge = prometheus.NewDesc("strata_group_oldest_unconsumed_age_seconds",
		"Age of the oldest record of the partition the group has not consumed, by its timestamp; 0 when the group has consumed everything.", groupLabels, nil)
)

var descs = []*prometheus.Desc{
	logStartOffset, logEndOffset, sizeBytes, segments,
	appendedBatches, appendedRecords, appendedBytes,
	fetches, fetchedBytes, fsyncs, rolls,
	groupCommitted, groupLag, groupOldestAge,
}

// Describe sends the descriptions of every metric the Collector exports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range descs {
		ch <- d
	}
}

// Collect sends the store's figures now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	stats := c.store.Stats()
	for name, parts := range stats.Topics {
		for i, st := range parts {
			c.partition(ch, name, strconv.Itoa(i), st)
		}
	}
	if c.groups {
		if err := c.collectGroups(ch); err != nil {
			ch <- prometheus.NewInvalidMetric(groupLag, err)
		}
	}
}

// partition sends one partition's figures.
func (c *Collector) partition(ch chan<- prometheus.Metric, topic, part string, st strata.PartitionStats) {
	gauge := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), topic, part)
	}
	counter := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), topic, part)
	}
	gauge(logStartOffset, st.StartOffset)
	gauge(logEndOffset, st.EndOffset)
	gauge(sizeBytes, st.Bytes)
	gauge(segments, int64(st.Segments))
	counter(appendedBatches, st.Appends)
	counter(appendedRecords, st.AppendedRecords)
	counter(appendedBytes, st.AppendedBytes)
	counter(fetches, st.Reads)
	counter(fetchedBytes, st.ReadBytes)
	counter(fsyncs, st.Fsyncs)
	counter(rolls, st.Rolls)
}

// collectGroups sends, for every group and every partition it has a
// committed offset on, the offset, the lag and the oldest unconsumed
// record's age. A group deleted meanwhile is left out; any other failure
// (a closed store) is returned.
func (c *Collector) collectGroups(ch chan<- prometheus.Metric) error {
	groups, err := c.store.ListGroups()
	if err != nil {
		return err
	}
	now := c.now()
	for _, g := range groups {
		d, err := c.store.DescribeGroup(context.Background(), g.Group)
		if errors.Is(err, strata.ErrUnknownGroup) {
			continue
		}
		if err != nil {
			return err
		}
		for _, p := range d.Partitions {
			if p.Committed < 0 {
				continue
			}
			part := strconv.Itoa(p.Partition)
			age := 0.0
			if !p.OldestUnconsumed.IsZero() {
				age = max(now.Sub(p.OldestUnconsumed).Seconds(), 0)
			}
			ch <- prometheus.MustNewConstMetric(groupCommitted, prometheus.GaugeValue, float64(p.Committed), g.Group, p.Topic, part)
			ch <- prometheus.MustNewConstMetric(groupLag, prometheus.GaugeValue, float64(p.Lag), g.Group, p.Topic, part)
			ch <- prometheus.MustNewConstMetric(groupOldestAge, prometheus.GaugeValue, age, g.Group, p.Topic, part)
		}
	}
	return nil
}
