package partition

import (
	"fmt"
	"time"

	"github.com/stratalog/strata/log"
)

// CheckRecord checks r as Encode checks a batch of r alone, without
// keeping anything: a key-less record in a compacted partition is
// ErrNoKey, a CreateTime timestamp more than MaxTimestampSkew ahead of the
// clock ErrTimestampTooFarAhead, and a record whose batch of its own would
// be over MaxBatchBytes ErrBatchTooLarge (compressed with the partition's
// codec, as Encode compresses it). A caller that holds records to append
// later, in batches of its choosing, checks each as it takes it, so that
// none of those batches fails for one record.
func (p *Partition) CheckRecord(r *log.Record) error {
	if p.cfg.Compacted && r.Key == nil {
		return fmt.Errorf("partition: record without a key to compacted %s: %w", p.name, ErrNoKey)
	}
	if limit, ok := p.timestampLimit(p.cfg.Now().UnixMilli()); ok && !r.Timestamp.IsZero() && r.Timestamp.UnixMilli() > limit {
		return fmt.Errorf("partition: record to %s is stamped %s, more than %v ahead of the clock: %w",
			p.name, r.Timestamp.UTC().Format(time.RFC3339Nano), p.cfg.MaxTimestampSkew, ErrTimestampTooFarAhead)
	}
	// Only a record that may not fit is encoded: uncompressed below the
	// limit, with room for a codec's framing, it fits.
	n := log.RecordSize(log.RecordFieldsSize(r), 0, 0)
	if p.cfg.Compression != log.None || p.cfg.ForceCompression {
		n = compressedBound(n)
	}
	if log.BatchHeaderSize+n <= p.cfg.MaxBatchBytes {
		return nil
	}
	_, err := p.Encode(nil, []log.Record{*r})
	return err
}

// compressedBound bounds what n bytes that do not compress take once
// compressed, with any of Kafka's codecs (snappy's bound, 32 + n + n/6,
// is the largest).
func compressedBound(n int) int { return 64 + n + n/6 }
