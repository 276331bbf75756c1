package partition

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// Defaults for Config's zero fields, Kafka's where Kafka has one.
const (
	DefaultSegmentBytes         = 1 << 30               // segment.bytes
	DefaultSegmentAge           = 7 * 24 * time.Hour    // segment.ms
	DefaultMaxBatchBytes        = 1 << 20               // max.message.bytes (Kafka: 1 MiB + 12)
	DefaultIndexIntervalBytes   = 4096                  // index.interval.bytes
	DefaultMaxIndexBytes        = 10 << 20              // segment.index.bytes
	DefaultSyncInterval         = time.Second           // SyncEvery's default
	DefaultMaxTimestampSkew     = time.Hour             // message.timestamp.after.max.ms (Kafka 4.0)
	DefaultProducerIDExpiration = 24 * time.Hour        // producer.id.expiration.ms
	minSegmentBytes             = log.BatchHeaderSize   // room for one empty batch
	maxSegmentBytes             = segment.MaxBytesLimit // index positions are int32
)

// SyncMode says when appended records are fsynced.
type SyncMode int8

// The sync modes. See SyncPolicy.
const (
	// SyncModeEvery fsyncs in the background every Interval.
	SyncModeEvery SyncMode = iota
	// SyncModeAlways fsyncs before Append returns; concurrent appenders share
	// one fsync (group commit).
	SyncModeAlways
	// SyncModeNever never fsyncs: not at Append, at a roll, at Close, nor
	// the checkpoints and directories.
	SyncModeNever
)

// SyncPolicy is a partition's flush policy. Its zero value is SyncEvery one
// second.
type SyncPolicy struct {
	Mode SyncMode
	// Interval is SyncModeEvery's period. Default 1 s.
	Interval time.Duration
}

// The flush policies.
var (
	// SyncAlways: Append returns only after the records are fsynced. The
	// active segment's file is then written with zeros ahead of all the
	// appends, its first included (segment.Config.ZeroFill), up to 1 MiB
	// at a time, so that the fsync of an append has the records to write
	// and no file size or block allocation to commit.
	SyncAlways = SyncPolicy{Mode: SyncModeAlways}
	// SyncNever: nothing is ever fsynced (the partition's files are on
	// vfs.NoSync of its file system); everything is written to the OS at
	// once, which writes it back to the disk when it likes.
	SyncNever = SyncPolicy{Mode: SyncModeNever}
)

// SyncEvery fsyncs in the background every d: after a power loss,
// records older than d survive. d = 0 means the default,
// DefaultSyncInterval (1 s); a negative d is refused with ErrInvalidConfig
// (Validate).
func SyncEvery(d time.Duration) SyncPolicy {
	return SyncPolicy{Mode: SyncModeEvery, Interval: d}
}

// String returns "always", "never" or "every 1s" (the default for an
// interval of 0).
func (p SyncPolicy) String() string {
	switch p.Mode {
	case SyncModeAlways:
		return "always"
	case SyncModeNever:
		return "never"
	case SyncModeEvery:
		return "every " + p.withDefaults().Interval.String()
	}
	return fmt.Sprintf("SyncPolicy{Mode: %d, Interval: %v}", p.Mode, p.Interval)
}

func (p SyncPolicy) withDefaults() SyncPolicy {
	if p.Mode == SyncModeEvery && p.Interval == 0 {
		p.Interval = DefaultSyncInterval
	}
	return p
}

// Config configures a partition. The zero value means the defaults.
type Config struct {
	// SegmentBytes is the size at which the active segment rolls: an append
	// that would take it past this starts a new segment. Default 1 GiB
	// (Kafka's segment.bytes); at most 2 GiB − 1.
	SegmentBytes int64
	// SegmentAge rolls the active segment when an incoming batch's max
	// timestamp is this much later than the segment's first batch's (record
	// time, as Kafka's segment.ms). Default 7 days.
	SegmentAge time.Duration
	// MaxBatchBytes is the largest encoded batch Append takes; a larger one
	// fails with ErrBatchTooLarge. Default 1 MiB (Kafka's max.message.bytes),
	// or SegmentBytes if that is smaller.
	MaxBatchBytes int
	// IndexIntervalBytes is the spacing of offset-index entries. Default 4096.
	IndexIntervalBytes int
	// MaxIndexBytes is the most bytes each index file may hold; a full
	// index rolls the segment. Default 10 MiB.
	MaxIndexBytes int
	// TimestampType is CreateTime (the default: the record's timestamp, or
	// the append time if it is zero) or LogAppendTime (the append time for
	// every record).
	TimestampType log.TimestampType
	// Sync is the flush policy. Default SyncEvery(1 s).
	Sync SyncPolicy
	// Compacted marks a compacted partition (cleanup policy compact): every
	// record needs a key (a key-less one is ErrNoKey, as Kafka refuses
	// them). Offsets may have gaps in any partition, within and between
	// segments — compaction removes records, a policy may change, Kafka's
	// logs have them — and only have to rise. Default false.
	Compacted bool
	// Preallocate reserves SegmentBytes on disk for each new segment
	// (fallocate), as Kafka's preallocate does, at a cost of SegmentBytes of
	// disk per partition up front. It buys little: the active segment's
	// file is grown ahead of its appends anyway (see WriteCalls), with
	// written zeros on Linux and under SyncAlways: reserved blocks are not
	// written ones, a first write into a page of them costs more, and the
	// fsync after an append into them commits their conversion. It stays
	// for Kafka's sake. Default false. Where the
	// file system cannot reserve blocks (no fallocate, or outside Linux) it
	// does nothing.
	Preallocate bool
	// WriteCalls makes every append write with pwrite(2). By default an
	// append of a batch smaller than a page (4 KiB: a few small records)
	// copies it into the active segment's shared memory mapping (the one
	// reads use) — no system call, which makes a single-record append about
	// twice as fast (BenchmarkAppend: impl=partition against
	// impl=partition-writecalls) — into zeros written ahead of the appends
	// after a segment's first (on Linux; elsewhere, blocks reserved ahead
	// by fallocate), so that the copy cannot meet a full disk; where
	// neither reaches the append it uses pwrite anyway, as it does for
	// larger batches. Both put the bytes in the OS page cache, which a
	// crash of the process does not lose, and the flush policy makes them
	// durable the same way. Default false.
	WriteCalls bool
	// MaxTimestampSkew refuses CreateTime records stamped further than this
	// ahead of the clock (ErrTimestampTooFarAhead), so that no segment can
	// hold back time-based retention by carrying a future timestamp. Default
	// 1 hour (Kafka 4.0's message.timestamp.after.max.ms); negative turns
	// the check off.
	MaxTimestampSkew time.Duration
	// Compression is the codec Append compresses batches with (log.None:
	// none), and CompressionLevel its level (0: the codec's default; see
	// log.CheckLevel). With ForceCompression, every append writes that
	// codec — AppendRawBatch re-encodes a batch written in another, and
	// AppendWith ignores the codec its caller asks for — as Kafka does for
	// a topic whose compression.type names a codec. Without it (Kafka's
	// compression.type=producer, the default), AppendRawBatch keeps a batch's
	// own codec and AppendWith uses the caller's. Defaults: none, 0, false.
	Compression      log.Compression
	CompressionLevel int
	ForceCompression bool
	// RecoverAll makes Open recover every segment, as after a crash with no
	// recovery point, whether or not the store shut down cleanly: every
	// batch is checked (header, CRC-32C, offsets), the log is cut at the
	// first damaged one and the later segments go, and both indexes are
	// rebuilt. The store reopens a partition that a read found damaged and
	// that must be whole (its internal offsets topic) with it. Default
	// false.
	RecoverAll bool
	// ReadOnly opens the partition for reading a directory that another
	// process owns and may be writing: Open takes nothing for granted,
	// changes nothing (no recovery, no checkpoint, no background work) and
	// the partition follows what the owner publishes (see the comment at
	// the top of follow.go); every write fails with ErrReadOnly. The
	// directory must exist. ReadCommitted reads are not supported: the
	// producer state that bounds them is not followed.
	ReadOnly bool
	// RefreshInterval is, for a ReadOnly partition, how often at most its
	// reads list the directory for new and removed segments, and how often
	// waiting readers look for new records. Default
	// DefaultRefreshInterval.
	RefreshInterval time.Duration
	// ProducerIDExpiration is how long the partition remembers a producer
	// (AppendProduced) after its last batch or marker, by that batch's max
	// timestamp: EnforceRetention and ExpireProducers, and Open, forget a
	// producer idle for longer, unless it has a transaction open. A
	// forgotten producer may start again at any sequence, and its retries
	// are no longer recognised. Default 24 hours (Kafka's
	// producer.id.expiration.ms); negative is ErrInvalidConfig.
	ProducerIDExpiration time.Duration
	// Now is the clock, for timestamps and for tests. Default time.Now.
	Now func() time.Time
	// Logger receives recovery reports. Default slog.Default().
	Logger *slog.Logger
}

// Check returns c with its zero fields set to their defaults, or an error
// wrapping ErrInvalidConfig that names the field and its valid range.
func (c Config) Check() (Config, error) { return c.withDefaults() }

// withDefaults fills zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.SegmentBytes == 0 {
		c.SegmentBytes = DefaultSegmentBytes
	}
	if c.SegmentAge == 0 {
		c.SegmentAge = DefaultSegmentAge
	}
	if c.RefreshInterval <= 0 {
		c.RefreshInterval = DefaultRefreshInterval
	}
	if c.MaxBatchBytes == 0 {
		c.MaxBatchBytes = int(min(DefaultMaxBatchBytes, c.SegmentBytes))
	}
	if c.IndexIntervalBytes == 0 {
		c.IndexIntervalBytes = DefaultIndexIntervalBytes
	}
	if c.MaxIndexBytes == 0 {
		c.MaxIndexBytes = DefaultMaxIndexBytes
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxTimestampSkew == 0 {
		c.MaxTimestampSkew = DefaultMaxTimestampSkew
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.ProducerIDExpiration == 0 {
		c.ProducerIDExpiration = DefaultProducerIDExpiration
	}
	if err := c.Sync.Validate(); err != nil {
		return c, err
	}
	c.Sync = c.Sync.withDefaults()
	switch {
	case c.SegmentBytes < minSegmentBytes || c.SegmentBytes > maxSegmentBytes:
		return c, fmt.Errorf("partition: segment bytes %d out of range [%d, %d]: %w", c.SegmentBytes, minSegmentBytes, maxSegmentBytes, ErrInvalidConfig)
	case c.ProducerIDExpiration < 0:
		return c, fmt.Errorf("partition: producer id expiration %v is negative: %w", c.ProducerIDExpiration, ErrInvalidConfig)
	case c.SegmentAge < 0:
		return c, fmt.Errorf("partition: segment age %v is negative: %w", c.SegmentAge, ErrInvalidConfig)
	case c.MaxBatchBytes < minSegmentBytes || int64(c.MaxBatchBytes) > c.SegmentBytes:
		return c, fmt.Errorf("partition: max batch bytes %d out of range [%d, %d] (the segment size): %w", c.MaxBatchBytes, minSegmentBytes, c.SegmentBytes, ErrInvalidConfig)
	case c.IndexIntervalBytes < 0:
		return c, fmt.Errorf("partition: index interval bytes %d is negative: %w", c.IndexIntervalBytes, ErrInvalidConfig)
	case c.MaxIndexBytes < 24:
		return c, fmt.Errorf("partition: max index bytes %d below 24 (two time-index entries): %w", c.MaxIndexBytes, ErrInvalidConfig)
	case c.TimestampType != log.CreateTime && c.TimestampType != log.LogAppendTime:
		return c, fmt.Errorf("partition: unknown timestamp type %d: %w", c.TimestampType, ErrInvalidConfig)
	}
	if err := log.CheckConfigLevel(c.Compression, c.CompressionLevel, ErrInvalidConfig); err != nil {
		return c, err
	}
	return c, nil
}

// segmentConfig is the configuration of the partition's segments.
func (c Config) segmentConfig() segment.Config {
	return segment.Config{
		MaxBytes:           c.SegmentBytes,
		IndexIntervalBytes: c.IndexIntervalBytes,
		MaxIndexBytes:      c.MaxIndexBytes,
		Preallocate:        c.Preallocate,
		WriteCalls:         c.WriteCalls,
		ZeroFill:           c.Sync.Mode == SyncModeAlways,
		AllowGaps:          true,
	}
}

// Validate reports, with ErrInvalidConfig, a policy that is not
// SyncAlways, SyncNever or SyncEvery(d ≥ 0), naming it as it was written:
// "SyncEvery(-1s): the interval is negative (0 means the default, 1s)".
func (p SyncPolicy) Validate() error {
	switch {
	case p.Mode < SyncModeEvery || p.Mode > SyncModeNever:
		return fmt.Errorf("partition: sync mode %d is not SyncModeEvery (0), SyncModeAlways (1) or SyncModeNever (2): %w", p.Mode, ErrInvalidConfig)
	case p.Mode == SyncModeEvery && p.Interval < 0:
		return fmt.Errorf("partition: SyncEvery(%v): the interval is negative (0 means the default, %v): %w", p.Interval, DefaultSyncInterval, ErrInvalidConfig)
	}
	return nil
}

// maxDecompress bounds what one batch's records may decompress to when the
// partition reads them (see Partition.MaxDecompressed).
func (c Config) maxDecompress() int {
	return min(1<<30, max(log.DefaultDecompressLimit, 64*c.MaxBatchBytes))
}
