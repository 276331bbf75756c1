package strata_test

import (
	"context"
	"errors"
	"io/fs"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// TestProduceSync: ProduceSync returns the records' Positions once they
// are appended, without waiting for Linger; after an I/O error the retry
// (RetryBackoff later) appends them once; after a lost answer the
// Positions are those the batch was written at.
func TestProduceSync(t *testing.T) {
	t.Run("no linger", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, _ := idemStore(t, strata.TopicConfig{Partitions: 2})
			p := s.Producer(strata.ProducerOptions{Linger: time.Hour})
			defer p.Close()
			start := time.Now()
			pos, err := p.ProduceSync(ctx, "t", kv("a", "1"), kv("a", "2"), kv("b", "3"))
			require.NoError(t, err)
			require.Zero(t, time.Since(start))
			pa, err := s.PartitionFor("t", []byte("a"))
			require.NoError(t, err)
			pb, err := s.PartitionFor("t", []byte("b"))
			require.NoError(t, err)
			want := []strata.Position{{Partition: pa, Offset: 0}, {Partition: pa, Offset: 1}, {Partition: pb, Offset: 0}}
			if pa == pb {
				want[2].Offset = 2
			}
			require.Equal(t, want, pos)
		})
	})
	t.Run("retried after an I/O error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, m := idemStore(t, strata.TopicConfig{})
			var armed atomic.Bool
			m.SetInjector(failLogWrites(2, &armed))
			p := s.Producer(strata.ProducerOptions{})
			defer p.Close()
			armed.Store(true)
			start := time.Now()
			pos, err := p.ProduceSync(ctx, "t", value100(0), value100(1))
			require.NoError(t, err)
			require.Equal(t, 200*time.Millisecond, time.Since(start), "two retries, RetryBackoff apart")
			require.Equal(t, []strata.Position{{0, 0}, {0, 1}}, pos)
			got, err := s.Read(ctx, "t", 0, 0, 10)
			require.NoError(t, err)
			require.Len(t, got, 2)
		})
	})
	t.Run("answer lost", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, _ := idemStore(t, strata.TopicConfig{})
			p := s.Producer(strata.ProducerOptions{})
			defer p.Close()
			_, err := p.ProduceSync(ctx, "t", value100(0))
			require.NoError(t, err)
			var lost atomic.Bool
			strata.SetAfterAppend(p, func(err error) error {
				if err == nil && lost.CompareAndSwap(false, true) {
					return &fs.PathError{Op: "write", Path: "t-0", Err: errors.New("answer lost")}
				}
				return err
			})
			pos, err := p.ProduceSync(ctx, "t", value100(1), value100(2))
			require.NoError(t, err)
			require.Equal(t, []strata.Position{{0, 1}, {0, 2}}, pos)
			end, err := s.ListOffsets("t", 0, strata.Latest)
			require.NoError(t, err)
			require.Equal(t, int64(3), end, "written once")
		})
	})
}

// TestProduceSyncRefused: no records is ErrNoRecords; a record Produce
// refuses stops the call, and the records before it are appended and
// reported.
func TestProduceSyncRefused(t *testing.T) {
	s, _ := idemStore(t, strata.TopicConfig{Partitions: 1, CleanupPolicy: strata.CleanupCompact})
	p := s.Producer(strata.ProducerOptions{})
	defer p.Close()
	_, err := p.ProduceSync(ctx, "t")
	require.ErrorIs(t, err, strata.ErrNoRecords)
	pos, err := p.ProduceSync(ctx, "t", kv("a", "1"), strata.Record{Value: []byte("no key")}, kv("b", "2"))
	require.ErrorIs(t, err, strata.ErrNoKey)
	require.Equal(t, []strata.Position{{0, 0}, {0, -1}, {0, -1}}, pos)
	end, err := s.ListOffsets("t", 0, strata.Latest)
	require.NoError(t, err)
	require.Equal(t, int64(1), end)
	_, err = p.ProduceSync(ctx, "nope", kv("a", "1"))
	require.ErrorIs(t, err, strata.ErrUnknownTopic)
}

// TestProduceSyncContextEnds: ProduceSync stops waiting when ctx ends, and
// the records are appended all the same once the retry succeeds.
func TestProduceSyncContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, m := idemStore(t, strata.TopicConfig{})
		var armed atomic.Bool
		m.SetInjector(failLogWrites(1, &armed))
		p := s.Producer(strata.ProducerOptions{})
		armed.Store(true)
		c, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := p.ProduceSync(c, "t", value100(0))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, 50*time.Millisecond, time.Since(start))
		require.NoError(t, p.Flush(ctx))
		require.Equal(t, 100*time.Millisecond, time.Since(start), "the retry, RetryBackoff after the failure")
		end, err := s.ListOffsets("t", 0, strata.Latest)
		require.NoError(t, err)
		require.Equal(t, int64(1), end)
		require.NoError(t, p.Close())
		_, err = p.ProduceSync(ctx, "t", value100(1))
		require.ErrorIs(t, err, strata.ErrClosed)
	})
}
