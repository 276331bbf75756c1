package mirror

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Defaults of Options' fields.
const (
	DefaultTransactionalID = "strata-mirror"
	DefaultSyncsTopic      = "strata-mirror.offset-syncs"
	DefaultBatchRecords    = 5000
	DefaultPollInterval    = 200 * time.Millisecond
	DefaultGroupInterval   = 10 * time.Second
	DefaultTopicInterval   = 10 * time.Second
	DefaultRetryBackoff    = time.Second
)

// ErrInvalidOptions means an Options field is out of range or missing; the
// message says which and what is valid.
var ErrInvalidOptions = errors.New("mirror: invalid options")

// Options configure a Mirror. The zero value of a field means its default.
type Options struct {
	// Brokers are the target cluster's seed brokers, host:port. Required.
	Brokers []string

	// Topics names source topics to mirror; TopicPattern, when set, adds
	// every source topic whose whole name it matches (anchored). Topics
	// created at the source later that match are picked up (see
	// TopicInterval). Internal topics (names starting with "__") are never
	// mirrored. At least one of the two is required.
	Topics       []string
	TopicPattern *regexp.Regexp

	// Rename gives the target topic's name for a source topic; nil keeps
	// the name (MirrorMaker 2's IdentityReplicationPolicy). It must give
	// distinct, valid Kafka topic names.
	Rename func(topic string) string

	// Groups selects the source consumer groups whose committed offsets
	// are translated and committed to the target group of the same name,
	// when it has no active members there; nil copies none.
	Groups *regexp.Regexp

	// TransactionalID is the mirror's Kafka transactional id (default
	// DefaultTransactionalID). A mirror that starts with the id of one
	// still running fences it: the older one's open transaction is aborted
	// and its next write fails. Give each mirror of a cluster its own.
	TransactionalID string

	// NoTransactions produces with an idempotent producer and no
	// transactions, for a target that refuses them (no transaction
	// coordinator, or ACLs). Delivery is then at least once: a crash
	// between a batch's records and its progress record copies those
	// records again on restart. Consumers read them twice; group offsets
	// translated later still point past the copies the group had read.
	NoTransactions bool

	// Compression is the codec the mirror's producer compresses batches
	// with: "none" (the default), "gzip", "snappy", "lz4" or "zstd".
	Compression string

	// ReplicationFactor of the topics the mirror creates; 0 or -1 means the
	// broker's default.
	ReplicationFactor int16

	// SyncsTopic is the target topic holding the mirror's offset syncs and
	// progress (default DefaultSyncsTopic): one partition, kept forever
	// (retention.ms -1). Deleting it makes the mirror start over.
	SyncsTopic string

	// BatchRecords is how many records of a partition one transaction
	// copies at most (default DefaultBatchRecords).
	BatchRecords int

	// PollInterval is how long Run waits before looking for new source
	// records once it has copied everything (default DefaultPollInterval).
	PollInterval time.Duration

	// GroupInterval is how often Run translates and commits group offsets
	// (default DefaultGroupInterval; MirrorMaker 2's
	// sync.group.offsets.interval.seconds is 60 s). TopicInterval is how
	// often it looks for new source topics and partitions (default
	// DefaultTopicInterval).
	GroupInterval time.Duration
	TopicInterval time.Duration

	// RetryBackoff is how long Run waits after a failed transaction before
	// it reconnects and resumes from the target's progress (default
	// DefaultRetryBackoff).
	RetryBackoff time.Duration

	// ClientOptions are added to the options of the mirror's franz-go
	// client: TLS (kgo.DialTLSConfig), SASL (kgo.SASL), a logger. Options
	// the mirror relies on (partitioner, transactional id, isolation) are
	// set after them.
	ClientOptions []kgo.Opt

	// Logger receives the mirror's progress and retries (nil: discarded).
	Logger *slog.Logger
}

func (o Options) withDefaults() (Options, error) {
	if len(o.Brokers) == 0 {
		return o, fmt.Errorf("%w: no target brokers (Brokers)", ErrInvalidOptions)
	}
	if len(o.Topics) == 0 && o.TopicPattern == nil {
		return o, fmt.Errorf("%w: no topics (Topics or TopicPattern)", ErrInvalidOptions)
	}
	if o.TransactionalID == "" {
		o.TransactionalID = DefaultTransactionalID
	}
	if o.SyncsTopic == "" {
		o.SyncsTopic = DefaultSyncsTopic
	}
	if _, err := codec(o.Compression); err != nil {
		return o, err
	}
	if o.ReplicationFactor == 0 {
		o.ReplicationFactor = -1
	}
	if o.ReplicationFactor < -1 {
		return o, fmt.Errorf("%w: ReplicationFactor %d, want -1 (broker default) or more than 0", ErrInvalidOptions, o.ReplicationFactor)
	}
	if o.BatchRecords < 0 {
		return o, fmt.Errorf("%w: BatchRecords %d, want 0 (default) or more", ErrInvalidOptions, o.BatchRecords)
	}
	if o.BatchRecords == 0 {
		o.BatchRecords = DefaultBatchRecords
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"PollInterval", &o.PollInterval, DefaultPollInterval},
		{"GroupInterval", &o.GroupInterval, DefaultGroupInterval},
		{"TopicInterval", &o.TopicInterval, DefaultTopicInterval},
		{"RetryBackoff", &o.RetryBackoff, DefaultRetryBackoff},
	} {
		if *d.v < 0 {
			return o, fmt.Errorf("%w: %s %v, want 0 (default) or more", ErrInvalidOptions, d.name, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// codec returns the kgo codec of a Compression name.
func codec(name string) (kgo.CompressionCodec, error) {
	switch name {
	case "", "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("%w: Compression %q, want none, gzip, snappy, lz4 or zstd", ErrInvalidOptions, name)
}
