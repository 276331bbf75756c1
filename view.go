package strata

import (
	"context"
	"iter"
	"time"
)

// View is the store's read paths at one isolation level, for a read that
// wants another level than the store's Options.Isolation: an audit tool
// that looks at every record (ReadUncommitted) in a store whose services
// read committed data, say. Each method is the Store's method of the same
// name, at the View's level. A View is a small value, safe for concurrent
// use, valid as long as the store is.
type View struct {
	s   *Store
	iso Isolation
}

// View returns the store's reads at isolation level iso; the zero level is
// the store's. A level that is none of the three makes every read fail
// with ErrInvalidConfig.
func (s *Store) View(iso Isolation) View { return View{s: s, iso: iso} }

// Isolation returns the level the View reads at.
func (v View) Isolation() Isolation {
	if checkIsolation(v.iso) != nil {
		return v.iso
	}
	return v.s.isolation(v.iso)
}

// Read is Store.Read at the View's isolation level.
func (v View) Read(ctx context.Context, topicName string, part int, offset int64, max int) ([]Record, error) {
	return v.s.read(ctx, v.iso, topicName, part, offset, max)
}

// Fetch is Store.Fetch at the View's isolation level.
func (v View) Fetch(ctx context.Context, topicName string, part int, offset int64, max int, maxWait time.Duration) ([]Record, error) {
	return v.s.fetch(ctx, v.iso, topicName, part, offset, max, maxWait)
}

// Records is Store.Records at the View's isolation level.
func (v View) Records(ctx context.Context, topicName string, part int, offset int64) iter.Seq2[Record, error] {
	return v.s.records(ctx, v.iso, topicName, part, offset)
}

// Scan is Store.Scan at the View's isolation level.
func (v View) Scan(topicName string, part int, offset int64) iter.Seq2[Record, error] {
	return v.s.scan(v.iso, topicName, part, offset)
}

// Get is Store.Get at the View's isolation level.
func (v View) Get(topicName string, part int, offset int64) (Record, error) {
	return v.s.getInto(v.iso, topicName, part, offset, nil)
}

// GetInto is Store.GetInto at the View's isolation level.
func (v View) GetInto(topicName string, part int, offset int64, dst []byte) (Record, error) {
	return v.s.getInto(v.iso, topicName, part, offset, dst)
}

// ListOffsets is Store.ListOffsets at the View's isolation level: under
// ReadCommitted, Latest is the last stable offset.
func (v View) ListOffsets(topicName string, part int, spec OffsetSpec) (int64, error) {
	return v.s.listOffsets(v.iso, topicName, part, spec)
}

// ListOffsetTime is Store.ListOffsetTime at the View's isolation level:
// under ReadCommitted, Latest is the last stable offset, and AtTime and
// MaxTimestamp find only records below it.
func (v View) ListOffsetTime(topicName string, part int, spec OffsetSpec) (OffsetTime, error) {
	return v.s.listOffsetTime(v.iso, topicName, part, spec)
}

// Lag is Store.Lag at the View's isolation level: under ReadCommitted, a
// partition's EndOffset is its last stable offset.
func (v View) Lag(ctx context.Context, groupName, topicName string) ([]PartitionLag, error) {
	return v.s.lag(ctx, v.iso, groupName, topicName)
}
