package strata_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/log"
)

// kafkaEpoch is when the records of the Kafka-written directories were
// produced.
var kafkaEpoch = time.UnixMilli(1_700_000_000_000).UTC()

// kafkaRecord is what a data record of a Kafka-written directory holds.
type kafkaRecord struct {
	offset     int64
	ts         time.Time
	key, value string
	headers    int
}

// kafkaPartition lays out a partition directory at dir as a broker writes
// one, and returns its data records in offset order and its end offset:
//
//   - segment 0: a gzip batch of an idempotent producer; one append call of
//     three batches (snappy, lz4, zstd), which Kafka before 4.0 indexes
//     once; a committed transaction (data, then a COMMIT marker) and an
//     aborted one (data, then ABORT); an uncompressed batch;
//   - segment 60: a compacted segment — gaps within and between batches, a
//     tombstone under a delete horizon, an empty batch a cleaning left — then
//     batches of 5 records, several per append call;
//   - segment 100 (the active one): batches of every codec, large enough to
//     be indexed.
func kafkaPartition(t *testing.T, dir string, id strata.TopicID, files kafkadir.Files) ([]kafkaRecord, int64) {
	t.Helper()
	var want []kafkaRecord
	keep := func(recs []log.Record) []log.Record {
		for _, r := range recs {
			kr := kafkaRecord{offset: r.Offset, ts: r.Timestamp, key: string(r.Key), headers: len(r.Headers)}
			if r.Value != nil {
				kr.value = string(r.Value)
			}
			want = append(want, kr)
		}
		return recs
	}
	ts := func(off int64) time.Time { return kafkaEpoch.Add(time.Duration(off) * time.Second) }
	batch := func(from, n int64, o kafkadir.Opts) []byte {
		return kafkadir.Batch(from, from+n-1, keep(kafkadir.Records(from, int(n), ts(from))), o)
	}
	none := kafkadir.Opts{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	with := func(c log.Compression) kafkadir.Opts { o := none; o.Codec = c; return o }

	p := kafkadir.New(dir)
	p.IndexIntervalBytes = 256
	p.Roll(0)
	p.Append(batch(0, 10, kafkadir.Opts{Codec: log.Gzip, ProducerID: 1000, BaseSequence: 0}))
	p.Append(batch(10, 10, with(log.Snappy)), batch(20, 10, with(log.LZ4)), batch(30, 10, with(log.Zstd)))
	p.Append(batch(40, 5, kafkadir.Opts{ProducerID: 2000, BaseSequence: 0, Transactional: true}))
	p.Append(kafkadir.Control(45, true, 2000, 0, ts(45)))
	p.Append(batch(46, 3, kafkadir.Opts{Codec: log.LZ4, ProducerID: 3000, BaseSequence: 0, Transactional: true}))
	p.Append(kafkadir.Control(49, false, 3000, 0, ts(49)))
	p.Abort(3000, 46, 49, 46)
	p.Append(batch(50, 8, none))

	p.Roll(60)
	sparse := kafkadir.Records(60, 10, ts(60))
	p.Append(kafkadir.Batch(60, 69, keep([]log.Record{sparse[0], sparse[2], sparse[5]}), with(log.Zstd)))
	tomb := log.Record{Offset: 70, Timestamp: ts(70), Key: []byte("deleted-key")}
	horizon := with(log.None)
	horizon.DeleteHorizon = kafkaEpoch.Add(time.Hour).UnixMilli()
	p.Append(kafkadir.Batch(70, 70, keep([]log.Record{tomb}), horizon))
	p.Append(kafkadir.Batch(71, 74, nil, kafkadir.Opts{ProducerID: 4000, BaseSequence: 9})) // emptied by a cleaning
	p.Append(batch(75, 5, none), batch(80, 5, with(log.Snappy)), batch(85, 5, none))
	p.Append(batch(90, 5, none), batch(95, 5, with(log.Snappy)))

	p.Roll(100)
	for i, c := range []log.Compression{log.None, log.Gzip, log.Snappy, log.LZ4, log.Zstd} {
		p.Append(batch(100+int64(i)*10, 10, with(c)))
	}
	files.TopicID = id
	_, err := p.Write(files)
	require.NoError(t, err)
	return want, 150
}

// openKafkaDir lays out topic "k" of one partition in a new store
// directory, gives it a registry with RebuildRegistry (the way to adopt a
// directory laid out by hand, or by Kafka), and opens it, after a clean
// shutdown or, with crashed, as after a crash (everything recovered).
func openKafkaDir(t *testing.T, crashed bool, files kafkadir.Files) (*strata.Store, string, []kafkaRecord, int64) {
	t.Helper()
	dir := t.TempDir()
	want, end := kafkaPartition(t, filepath.Join(dir, "k-0"), strata.TopicID{7, 7, 7}, files)
	names, err := strata.RebuildRegistry(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"k"}, names)
	if !crashed {
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".clean-shutdown"), nil, 0o644))
	}
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever, Logger: logOnFailure(t)})
	require.NoError(t, err)
	return s, dir, want, end
}

// requireKafkaRecords checks that got are the records of want from the
// first at or after from on.
func requireKafkaRecords(t *testing.T, want []kafkaRecord, from int64, got []strata.Record) {
	t.Helper()
	i := 0
	for i < len(want) && want[i].offset < from {
		i++
	}
	require.Len(t, got, len(want)-i, "records from %d", from)
	for j, r := range got {
		w := want[i+j]
		require.Equal(t, w.offset, r.Offset)
		require.Equal(t, w.key, string(r.Key), "offset %d", r.Offset)
		require.Equal(t, w.value, string(r.Value), "offset %d", r.Offset)
		require.Len(t, r.Headers, w.headers, "offset %d", r.Offset)
	}
}

// TestKafkaWrittenDirectory opens a partition laid out as Kafka writes it,
// after a clean shutdown and after a crash: every record reads back, from
// every offset, through every read path; control records never appear;
// the offsets Kafka's files give (end, lookups by time) are the same; new
// records follow; Kafka's own side files are left alone.
func TestKafkaWrittenDirectory(t *testing.T) {
	for _, crashed := range []bool{false, true} {
		t.Run(fmt.Sprint("crashed=", crashed), func(t *testing.T) {
			s, dir, want, end := openKafkaDir(t, crashed, kafkadir.Files{Extras: true})
			defer s.Close()
			latest, err := s.ListOffsets("k", 0, strata.Latest)
			require.NoError(t, err)
			require.Equal(t, end, latest, "nothing was cut")

			recs, err := s.Read(ctx, "k", 0, 0, 1000)
			require.NoError(t, err)
			requireKafkaRecords(t, want, 0, recs)
			for off := int64(0); off < end; off++ {
				recs, err := s.Read(ctx, "k", 0, off, 1000)
				require.NoError(t, err, "offset %d", off)
				requireKafkaRecords(t, want, off, recs)
			}

			var streamed []strata.Record
			rctx, cancel := context.WithCancel(ctx)
			for r, err := range s.Records(rctx, "k", 0, 0) {
				require.NoError(t, err)
				streamed = append(streamed, strata.Record{Offset: r.Offset, Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value), Headers: r.Headers})
				if len(streamed) == len(want) {
					break
				}
			}
			cancel()
			requireKafkaRecords(t, want, 0, streamed)

			c, err := s.Consumer("g", []string{"k"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, MaxPollRecords: 7})
			require.NoError(t, err)
			var polled []strata.Record
			for len(polled) < len(want) {
				msgs, err := c.Poll(ctx)
				require.NoError(t, err)
				for _, m := range msgs {
					polled = append(polled, m.Record)
				}
			}
			requireKafkaRecords(t, want, 0, polled)
			require.NoError(t, c.Commit(ctx))
			om, ok := s.Committed("g", "k", 0)
			require.True(t, ok)
			require.Equal(t, end, om.Offset, "the commit steps over the markers and gaps to the end")
			lag, err := s.Lag(ctx, "g", "k")
			require.NoError(t, err)
			require.Zero(t, lag[0].Lag)
			require.NoError(t, c.Close())

			// Lookups by time find the first record at or after a time.
			for _, sec := range []int{0, 13, 47, 63, 99, 120} {
				at := kafkaEpoch.Add(time.Duration(sec) * time.Second)
				off, err := s.ListOffsets("k", 0, strata.AtTime(at))
				require.NoError(t, err)
				i := 0
				for want[i].ts.Before(at) {
					i++
				}
				require.Equal(t, want[i].offset, off, "second %d", sec)
			}

			pos, err := s.AppendTo(ctx, "k", 0, rec("new", "after kafka"))
			require.NoError(t, err)
			require.Equal(t, end, pos)
			for _, name := range []string{"leader-epoch-checkpoint", "partition.metadata", "00000000000000000000.snapshot",
				"00000000000000000060.txnindex", "00000000000000000100.snapshot"} {
				_, err := os.Stat(filepath.Join(dir, "k-0", name))
				require.NoError(t, err, "Kafka's %s is left alone", name)
			}
			require.NoError(t, s.Close())

			s, err = strata.Open(dir, &strata.Options{Logger: logOnFailure(t)})
			require.NoError(t, err)
			recs, err = s.Read(ctx, "k", 0, 0, 1000)
			require.NoError(t, err)
			require.Len(t, recs, len(want)+1)
			requireKafkaRecords(t, want, 0, recs[:len(want)])
			require.Equal(t, "after kafka", string(recs[len(want)].Value))
		})
	}
}

// TestKafkaDirectoryMissingIndexes: a Kafka directory whose indexes are
// missing (sealed and active segments) opens with every record.
func TestKafkaDirectoryMissingIndexes(t *testing.T) {
	for _, crashed := range []bool{false, true} {
		s, _, want, end := openKafkaDir(t, crashed, kafkadir.Files{
			MissingIndex: map[int64]bool{0: true, 100: true}, MissingTimeIndex: map[int64]bool{60: true, 100: true},
		})
		latest, err := s.ListOffsets("k", 0, strata.Latest)
		require.NoError(t, err)
		require.Equal(t, end, latest)
		recs, err := s.Read(ctx, "k", 0, 0, 1000)
		require.NoError(t, err)
		requireKafkaRecords(t, want, 0, recs)
		recs, err = s.Read(ctx, "k", 0, 72, 1000)
		require.NoError(t, err)
		requireKafkaRecords(t, want, 72, recs)
		require.NoError(t, s.Close())
	}
}

// TestTrailingMarker: a partition whose last batch is a transaction's
// COMMIT marker. A consumer that read every record commits the end offset
// (past the marker), so its lag is zero; a read from the marker's offset
// returns nothing, and a Fetch there waits for a record after it.
func TestTrailingMarker(t *testing.T) {
	dir := t.TempDir()
	p := kafkadir.New(filepath.Join(dir, "k-0"))
	p.Roll(0)
	p.Append(kafkadir.Batch(0, 4, kafkadir.Records(0, 5, kafkaEpoch), kafkadir.Opts{ProducerID: 9, BaseSequence: 0, Transactional: true}))
	p.Append(kafkadir.Control(5, true, 9, 0, kafkaEpoch))
	_, err := p.Write(kafkadir.Files{})
	require.NoError(t, err)
	_, err = strata.RebuildRegistry(dir)
	require.NoError(t, err)
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()

	end, err := s.ListOffsets("k", 0, strata.Latest)
	require.NoError(t, err)
	require.Equal(t, int64(6), end)
	recs, err := s.Read(ctx, "k", 0, 5, 10)
	require.NoError(t, err)
	require.Empty(t, recs, "the marker is no record")

	c, err := s.Consumer("g", []string{"k"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	n := 0
	for n < 5 {
		msgs, err := c.Poll(ctx)
		require.NoError(t, err)
		n += len(msgs)
	}
	require.Equal(t, 5, n)
	pctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	msgs, err := c.Poll(pctx) // steps over the marker
	cancel()
	require.Empty(t, msgs)
	if err != nil {
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}
	require.NoError(t, c.Commit(ctx))
	om, ok := s.Committed("g", "k", 0)
	require.True(t, ok)
	require.Equal(t, int64(6), om.Offset, "the commit is past the marker")
	lag, err := s.Lag(ctx, "g", "k")
	require.NoError(t, err)
	require.Zero(t, lag[0].Lag)
	require.NoError(t, c.Close())

	// A Fetch at the marker waits for a record after it, rather than
	// returning nothing at once (which would make a fetch loop spin).
	fetched := make(chan []strata.Record, 1)
	go func() {
		recs, err := s.Fetch(ctx, "k", 0, 5, 10, time.Minute)
		assert.NoError(t, err)
		fetched <- recs
	}()
	off, err := s.AppendTo(ctx, "k", 0, strata.Record{Key: []byte("k"), Value: []byte("after")})
	require.NoError(t, err)
	require.Equal(t, int64(6), off)
	recs = <-fetched
	require.Len(t, recs, 1)
	require.Equal(t, int64(6), recs[0].Offset)
	recs, err = s.Read(ctx, "k", 0, 5, 10)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, int64(6), recs[0].Offset)
}
