package watermill

import (
	"context"
	"time"
)

type ctxKey int

const (
	partitionKey ctxKey = iota
	offsetKey
	timestampKey
	keyKey
)

// withRecord returns ctx carrying where a delivered message's record is.
func withRecord(ctx context.Context, partition int, offset int64, ts time.Time, key []byte) context.Context {
	ctx = context.WithValue(ctx, partitionKey, partition)
	ctx = context.WithValue(ctx, offsetKey, offset)
	ctx = context.WithValue(ctx, timestampKey, ts)
	return context.WithValue(ctx, keyKey, key)
}

// MessagePartitionFromCtx returns the partition of a delivered message's
// record, from the message's Context.
func MessagePartitionFromCtx(ctx context.Context) (int, bool) {
	p, ok := ctx.Value(partitionKey).(int)
	return p, ok
}

// MessagePartitionOffsetFromCtx returns the offset of a delivered
// message's record in its partition.
func MessagePartitionOffsetFromCtx(ctx context.Context) (int64, bool) {
	o, ok := ctx.Value(offsetKey).(int64)
	return o, ok
}

// MessageTimestampFromCtx returns the timestamp of a delivered message's
// record (its append time, unless the publisher's marshaler set one).
func MessageTimestampFromCtx(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(timestampKey).(time.Time)
	return t, ok
}

// MessageKeyFromCtx returns the key of a delivered message's record (nil
// for a record without one).
func MessageKeyFromCtx(ctx context.Context) ([]byte, bool) {
	k, ok := ctx.Value(keyKey).([]byte)
	return k, ok
}
