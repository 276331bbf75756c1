package strata_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/typed"
)

// eventRecords returns n JSON-like records of about 200 bytes, keyed by
// order id.
func eventRecords(from, n int) []strata.Record {
	recs := make([]strata.Record, n)
	for i := range recs {
		id := from + i
		recs[i] = strata.Record{
			Key: fmt.Appendf(nil, "order-%05d", id%97),
			Value: fmt.Appendf(nil, `{"order":%d,"customer":"customer-%04d","status":"paid","amount":%d.%02d,"currency":"EUR","items":%d,"trace":"%016x"}`,
				id, id%1000, id*37%1000, id%100, id%9, uint64(id)*0x9e3779b97f4a7c15),
		}
	}
	return recs
}

// segmentCodecs returns the codec of every batch in a partition
// directory's segments.
func segmentCodecs(t *testing.T, dir string) map[log.Compression]int {
	t.Helper()
	out := map[log.Compression]int{}
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	require.NoError(t, err)
	for _, name := range names {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		for p := 0; p+log.BatchHeaderSize <= len(data); {
			h, err := log.ReadHeader(data[p:])
			if err != nil {
				break // zeros reserved past the last batch
			}
			out[h.Compression()]++
			p += h.Size()
		}
	}
	return out
}

// TestTopicCompression: a topic with a codec writes every batch with it,
// smaller on disk than the same topic uncompressed, and every read path
// returns the records, before and after a reopen (clean or recovered).
func TestTopicCompression(t *testing.T) {
	const n = 1000
	sizes := map[strata.CompressionType]int64{}
	for _, ct := range []strata.CompressionType{strata.CompressionNone, strata.CompressionGzip, strata.CompressionSnappy, strata.CompressionLZ4, strata.CompressionZstd} {
		t.Run(string(ct), func(t *testing.T) {
			dir := t.TempDir()
			s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
			require.NoError(t, err)
			require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Compression: ct, SegmentBytes: 64 << 10}))
			for from := 0; from < n; from += 100 {
				_, err := s.AppendTo(ctx, "t", 0, eventRecords(from, 100)...)
				require.NoError(t, err)
			}
			d, err := s.DescribeTopic("t")
			require.NoError(t, err)
			require.Equal(t, ct, d.Config.Compression)
			sizes[ct] = d.Partitions[0].Bytes
			codec, _ := ct.Codec()
			got := segmentCodecs(t, filepath.Join(dir, "t-0"))
			require.Equal(t, map[log.Compression]int{codec: n / 100}, got, "every batch on disk is %s", ct)

			check := func(s *strata.Store) {
				want := eventRecords(0, n)
				recs, err := s.Read(ctx, "t", 0, 0, n)
				require.NoError(t, err)
				require.Len(t, recs, n)
				for i, r := range recs {
					require.Equal(t, int64(i), r.Offset)
					require.Equal(t, string(want[i].Value), string(r.Value))
				}
				for _, off := range []int64{0, 57, 99, 100, 555, n - 1} {
					recs, err := s.Read(ctx, "t", 0, off, 1)
					require.NoError(t, err)
					require.Equal(t, off, recs[0].Offset)
					require.Equal(t, string(want[off].Value), string(recs[0].Value))
				}
				i := 0
				rctx, cancel := context.WithCancel(ctx)
				defer cancel()
				for r, err := range s.Records(rctx, "t", 0, 250) {
					require.NoError(t, err)
					require.Equal(t, string(want[250+i].Value), string(r.Value))
					if i++; 250+i == n {
						break
					}
				}
				tr := typed.NewReader(s, "t", 0, 990, typed.String(), typed.String())
				r, err := tr.Next(ctx)
				require.NoError(t, err)
				require.Equal(t, string(want[990].Value), r.Value)
			}
			check(s)
			require.NoError(t, s.Close())
			for _, crashed := range []bool{false, true} {
				if crashed {
					require.NoError(t, os.Remove(filepath.Join(dir, ".clean-shutdown")))
				}
				s, err := strata.Open(dir, nil)
				require.NoError(t, err)
				end, err := s.ListOffsets("t", 0, strata.Latest)
				require.NoError(t, err)
				require.Equal(t, int64(n), end, "crashed=%v: recovery keeps every compressed batch", crashed)
				check(s)
				require.NoError(t, s.Close())
			}
		})
	}
	for _, ct := range []strata.CompressionType{strata.CompressionGzip, strata.CompressionSnappy, strata.CompressionLZ4, strata.CompressionZstd} {
		require.Less(t, sizes[ct], sizes[strata.CompressionNone]*2/3, "%s shrinks the records", ct)
	}
	require.Less(t, sizes[strata.CompressionZstd], sizes[strata.CompressionNone]*30/100, "zstd: at most 0.30 of the size")
}

// TestCompressedCompactedTopic: a compacted topic whose batches are
// compressed is cleaned (the batches kept are rebuilt with their codec) and
// reads back the latest value of every key.
func TestCompressedCompactedTopic(t *testing.T) {
	s, err := strata.Open(t.TempDir(), &strata.Options{Sync: strata.SyncNever, CleanerInterval: -1})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("c", strata.TopicConfig{CleanupPolicy: strata.CleanupCompact, Compression: strata.CompressionZstd,
		SegmentBytes: 8 << 10, MinCleanableDirtyRatio: -1}))
	latest := map[string]string{}
	for from := 0; from < 2000; from += 50 {
		recs := eventRecords(from, 50)
		for _, r := range recs {
			latest[string(r.Key)] = string(r.Value)
		}
		_, err := s.AppendTo(ctx, "c", 0, recs...)
		require.NoError(t, err)
	}
	st, err := s.Compact(ctx, "c")
	require.NoError(t, err)
	require.Positive(t, st.Superseded)
	require.Positive(t, st.Rebuilt, "compressed batches were rebuilt")
	recs, err := s.Read(ctx, "c", 0, 0, 5000)
	require.NoError(t, err)
	seen := map[string]string{}
	for _, r := range recs {
		seen[string(r.Key)] = string(r.Value)
	}
	require.Equal(t, latest, seen)
	require.Less(t, len(recs), 2000)
}

// TestProducerCompression: a Producer compresses with its codec on a topic
// that leaves it to the writer, and the topic's codec wins on a topic that
// names one; options that name no codec are refused.
func TestProducerCompression(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("free", strata.TopicConfig{}))
	require.NoError(t, s.CreateTopic("gz", strata.TopicConfig{Compression: strata.CompressionGzip}))
	p := s.Producer(strata.ProducerOptions{Compression: strata.CompressionLZ4, Linger: time.Hour})
	for _, topicName := range []string{"free", "gz"} {
		for _, r := range eventRecords(0, 200) {
			require.NoError(t, p.Produce(ctx, topicName, r, nil))
		}
	}
	require.NoError(t, p.Flush(ctx))
	require.NoError(t, p.Close())
	require.Equal(t, map[log.Compression]int{log.LZ4: segmentCodecs(t, filepath.Join(dir, "free-0"))[log.LZ4]},
		segmentCodecs(t, filepath.Join(dir, "free-0")))
	require.Positive(t, segmentCodecs(t, filepath.Join(dir, "free-0"))[log.LZ4])
	require.Zero(t, segmentCodecs(t, filepath.Join(dir, "gz-0"))[log.LZ4], "the topic's codec wins")
	require.Positive(t, segmentCodecs(t, filepath.Join(dir, "gz-0"))[log.Gzip])
	for _, ct := range []strata.CompressionType{"free", "gz"} {
		recs, err := s.Read(ctx, string(ct), 0, 0, 500)
		require.NoError(t, err)
		require.Len(t, recs, 200)
	}

	for _, bad := range []strata.ProducerOptions{{Compression: "brotli"}, {Compression: strata.CompressionProducer},
		{Compression: strata.CompressionGzip, CompressionLevel: 10}} {
		p := s.Producer(bad)
		require.ErrorIs(t, p.Produce(ctx, "free", rec("k", "v"), nil), strata.ErrInvalidConfig, "%+v", bad)
		require.NoError(t, p.Close())
	}
	for _, cfg := range []strata.TopicConfig{{Compression: "brotli"}, {Compression: strata.CompressionZstd, CompressionLevel: 99},
		{CompressionLevel: 3}} {
		require.ErrorIs(t, s.CreateTopic("bad", cfg), strata.ErrInvalidConfig, "%+v", cfg)
	}
}

// TestUnreadableBatchesAreKept: data this version cannot read — messages
// of Kafka's formats before v2 (magic 0 and 1) and a batch whose codec
// Kafka does not have, and a batch that would decompress past the limit —
// is kept by recovery with everything after it; reading it says what is
// unsupported, and the records after it are read by offset.
func TestUnreadableBatchesAreKept(t *testing.T) {
	for _, crashed := range []bool{false, true} {
		dir := t.TempDir()
		p := kafkadir.New(filepath.Join(dir, "k-0"))
		p.Roll(0)
		p.Append(kafkadir.Legacy(0, 0, kafkaEpoch, []byte("a"), []byte("v0")), kafkadir.Legacy(0, 1, kafkaEpoch, nil, []byte("v0")))
		p.Append(kafkadir.Legacy(1, 2, kafkaEpoch, []byte("b"), []byte("v1")), kafkadir.Legacy(1, 3, kafkaEpoch, []byte("c"), nil))
		p.Append(kafkadir.Batch(4, 8, kafkadir.Records(4, 5, kafkaEpoch), kafkadir.Opts{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}))
		odd := kafkadir.Batch(9, 10, kafkadir.Records(9, 2, kafkaEpoch), kafkadir.Opts{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1})
		odd[22] |= 6 // a codec Kafka does not have; the CRC made to match
		fixCRCOf(odd)
		p.Append(odd)
		p.Append(kafkadir.Batch(11, 15, kafkadir.Records(11, 5, kafkaEpoch), kafkadir.Opts{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}))
		// A bomb: a few kilobytes of zstd that hold 80 MiB of records.
		bomb := make([]log.Record, 10)
		for i := range bomb {
			bomb[i] = log.Record{Offset: int64(16 + i), Timestamp: kafkaEpoch, Value: make([]byte, 8<<20)}
		}
		zb := kafkadir.Batch(16, 25, bomb, kafkadir.Opts{Codec: log.Zstd, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1})
		require.Less(t, len(zb), 1<<20)
		p.Append(zb)
		p.Append(kafkadir.Batch(26, 27, kafkadir.Records(26, 2, kafkaEpoch), kafkadir.Opts{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}))
		_, err := p.Write(kafkadir.Files{})
		require.NoError(t, err)
		_, err = strata.RebuildRegistry(dir)
		require.NoError(t, err)
		if !crashed {
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".clean-shutdown"), nil, 0o644))
		}
		s, err := strata.Open(dir, nil)
		require.NoError(t, err)
		end, err := s.ListOffsets("k", 0, strata.Latest)
		require.NoError(t, err)
		require.Equal(t, int64(28), end, "crashed=%v: nothing was cut", crashed)
		_, err = s.Read(ctx, "k", 0, 0, 10)
		require.ErrorIs(t, err, strata.ErrUnsupportedFormat)
		require.NotErrorIs(t, err, strata.ErrCorrupt)
		recs, err := s.Read(ctx, "k", 0, 4, 100)
		require.NoError(t, err)
		require.Len(t, recs, 5, "the records before the unknown codec")
		_, err = s.Read(ctx, "k", 0, 9, 100)
		require.ErrorIs(t, err, strata.ErrUnsupportedCompression)
		recs, err = s.Read(ctx, "k", 0, 11, 100)
		require.NoError(t, err)
		require.Len(t, recs, 5, "the records before the bomb")
		_, err = s.Read(ctx, "k", 0, 16, 100)
		require.ErrorIs(t, err, strata.ErrDecompressedTooLarge)
		recs, err = s.Read(ctx, "k", 0, 26, 100)
		require.NoError(t, err)
		require.Len(t, recs, 2)
		off, err := s.AppendTo(ctx, "k", 0, rec("k", "new"))
		require.NoError(t, err)
		require.Equal(t, int64(28), off, "no offset is used twice")
		require.NoError(t, s.Close())
	}
}

// fixCRCOf recomputes the CRC-32C of a v2 batch.
func fixCRCOf(b []byte) {
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
}
