package strata_test

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// TestAppendBatchRefuses checks each batch AppendBatch refuses, with its
// sentinel, and that a refused batch writes nothing.
func TestAppendBatchRefuses(t *testing.T) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	ctx := context.Background()
	now := time.Now().UnixMilli()
	enc := func(opts log.BatchOptions) []byte {
		opts.Now = now
		b, err := log.EncodeBatch(nil, []strata.Record{{Value: []byte("v")}}, opts)
		require.NoError(t, err)
		return b
	}
	pid, err := s.NewProducerID()
	require.NoError(t, err)
	_, _, err = s.AppendBatch(ctx, "events", 0, enc(log.BatchOptions{Idempotent: true, ProducerID: pid}))
	require.NoError(t, err)
	control, err := log.EncodeControlBatch(nil, log.ControlAbort, log.MarkerOptions{Now: now, ProducerID: pid})
	require.NoError(t, err)
	legacy := enc(log.BatchOptions{})
	legacy[16] = 1 // magic

	for _, tt := range []struct {
		name  string
		topic string
		part  int
		batch []byte
		want  error
	}{
		{"transactional", "events", 0, enc(log.BatchOptions{Idempotent: true, ProducerID: pid, Transactional: true, BaseSequence: 1}), strata.ErrInvalidProducer},
		{"control", "events", 0, control, strata.ErrInvalidProducer},
		{"legacy", "events", 0, legacy, strata.ErrUnsupportedFormat},
		{"sequence gap", "events", 0, enc(log.BatchOptions{Idempotent: true, ProducerID: pid, BaseSequence: 5}), strata.ErrOutOfOrderSequence},
		{"negative producer id", "events", 0, enc(log.BatchOptions{Idempotent: true, ProducerID: -5}), strata.ErrInvalidProducer},
		{"bad CRC", "events", 0, func() []byte { b := enc(log.BatchOptions{}); b[len(b)-1] ^= 1; return b }(), strata.ErrCorrupt},
		{"two batches", "events", 0, append(enc(log.BatchOptions{}), enc(log.BatchOptions{})...), strata.ErrCorrupt},
		{"empty", "events", 0, nil, strata.ErrCorrupt},
		{"unknown partition", "events", 3, enc(log.BatchOptions{}), strata.ErrUnknownPartition},
		{"unknown topic", "missing", 0, enc(log.BatchOptions{}), strata.ErrUnknownTopic},
		{"internal topic", strata.ConsumerOffsetsTopic, 0, enc(log.BatchOptions{}), strata.ErrReservedTopic},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := s.AppendBatch(ctx, tt.topic, tt.part, tt.batch)
			require.ErrorIs(t, err, tt.want)
			end, err := s.ListOffsets("events", 0, strata.Latest)
			require.NoError(t, err)
			require.Equal(t, int64(1), end)
		})
	}
	require.Equal(t, uint32(0), binary.BigEndian.Uint32(legacy[:4]))
}
