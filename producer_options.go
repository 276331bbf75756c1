package strata

import (
	"fmt"
	"time"

	"github.com/stratalog/strata/log"
)

// ProducerOptions configure a Producer. Every zero (or negative, for the
// sizes) field means the default written on it.
type ProducerOptions struct {
	// Linger is how long a partition's batch waits for more records after
	// its first one before it is appended (Kafka's linger.ms). Default 5 ms
	// (Kafka 4.0's); negative means no wait: a batch is appended as soon as
	// the producer's goroutine is free, with whatever gathered meanwhile.
	Linger time.Duration
	// BatchBytes is the encoded size at which a partition's batch is
	// appended without waiting for Linger (Kafka's batch.size): a record
	// that would take the batch past it starts the next one. Default 16384.
	// A topic's MaxBatchBytes caps it; a record larger than BatchBytes gets
	// a batch of its own.
	BatchBytes int
	// MaxBufferedRecords bounds the records produced but not yet appended;
	// at the bound Produce waits for room (back-pressure). Default 100000.
	MaxBufferedRecords int
	// MaxBufferedBytes bounds their encoded size in the same way (Kafka's
	// buffer.memory). Default 32 MiB. A record larger than the bound is
	// taken when nothing else is buffered.
	MaxBufferedBytes int
	// Compression is the codec the producer compresses its batches with
	// (Kafka's compression.type for producers), on topics whose own
	// Compression is producer (the default); a topic that names a codec
	// uses its own. A batch that would not get smaller is appended
	// uncompressed. Default CompressionNone. BatchBytes counts the records
	// before compression.
	Compression CompressionType
	// CompressionLevel is the codec's level (gzip 1–9, lz4 1–17, zstd
	// -131072–22); 0, the default, is the codec's own.
	CompressionLevel int
	// DisableIdempotence turns the producer's idempotence off (Kafka's
	// enable.idempotence=false): its batches carry no producer id, and a
	// batch whose append fails is not tried again. By default a Producer
	// is idempotent, as Kafka's is since 3.0; see Producer.
	DisableIdempotence bool
	// RetryBackoff is how long an idempotent producer waits before it
	// appends again a batch whose append failed with an I/O error (Kafka's
	// retry.backoff.ms). Default 100 ms.
	RetryBackoff time.Duration
	// DeliveryTimeout bounds the time from the Produce of a batch's first
	// record (the batch's opening, Linger included) to the end of its last
	// retry, as Kafka's delivery.timeout.ms counts from a batch's creation
	// (ProducerBatch.createdMs): a batch still failing then fails its
	// records. Default 2 minutes; negative means no retries.
	DeliveryTimeout time.Duration
}

// Defaults of ProducerOptions.
const (
	defaultLinger             = 5 * time.Millisecond
	defaultBatchBytes         = 16384
	defaultMaxBufferedRecords = 100000
	defaultMaxBufferedBytes   = 32 << 20
	defaultRetryBackoff       = 100 * time.Millisecond
	defaultDeliveryTimeout    = 2 * time.Minute
)

func (o ProducerOptions) withDefaults() ProducerOptions {
	switch {
	case o.Linger == 0:
		o.Linger = defaultLinger
	case o.Linger < 0:
		o.Linger = 0
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = defaultBatchBytes
	}
	if o.MaxBufferedRecords <= 0 {
		o.MaxBufferedRecords = defaultMaxBufferedRecords
	}
	if o.MaxBufferedBytes <= 0 {
		o.MaxBufferedBytes = defaultMaxBufferedBytes
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = defaultRetryBackoff
	}
	switch {
	case o.DeliveryTimeout == 0:
		o.DeliveryTimeout = defaultDeliveryTimeout
	case o.DeliveryTimeout < 0:
		o.DeliveryTimeout = 0
	}
	return o
}

// codec returns the codec of o.Compression, or an error wrapping
// ErrInvalidConfig if it or the level is not one.
func (o ProducerOptions) codec() (log.Compression, error) {
	if o.Compression == "" {
		o.Compression = CompressionNone
	}
	c, ok := o.Compression.Codec()
	if !ok {
		return log.None, fmt.Errorf("strata: producer compression %q is not none, gzip, snappy, lz4 or zstd: %w", o.Compression, ErrInvalidConfig)
	}
	if err := log.CheckConfigLevel(c, o.CompressionLevel, ErrInvalidConfig); err != nil {
		return log.None, fmt.Errorf("strata: producer: %w", err)
	}
	return c, nil
}
