package strata_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/log"
)

// kafkaTxnPartition lays out, at dir, a partition as a broker writes one
// with transactions of several producers interleaved, and returns the
// offsets of its data records under ReadUncommitted and under
// ReadCommitted, and its end and last stable offset:
//
//	segment 0:  0-4 plain; 5-7 producer 100's transaction; 8-9 producer
//	            200's (lz4); 10-11 plain; 12 COMMIT 100; 13-14 producer
//	            300's; 15 ABORT 200 (.txnindex: 200, 8, 15, LSO 13)
//	segment 16: 16-18 producer 300's again; 19 ABORT 300 (.txnindex: 300,
//	            13, 19, LSO 20); 20-22 plain; 23-24 producer 400's
//	            transaction, never ended; 25 plain; and the producer
//	            snapshot of a clean shutdown at 26.
func kafkaTxnPartition(t *testing.T, dir string) (all, committed []int64, end, lso int64) {
	t.Helper()
	ts := func(off int64) time.Time { return kafkaEpoch.Add(time.Duration(off) * time.Second) }
	none := kafkadir.Opts{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	batch := func(from, n int64, o kafkadir.Opts) []byte {
		for off := from; off < from+n; off++ {
			all = append(all, off)
		}
		return kafkadir.Batch(from, from+n-1, kafkadir.Records(from, int(n), ts(from)), o)
	}
	txn := func(pid int64, seq int32) kafkadir.Opts {
		return kafkadir.Opts{ProducerID: pid, BaseSequence: seq, Transactional: true}
	}
	p := kafkadir.New(dir)
	p.IndexIntervalBytes = 128
	p.Roll(0)
	p.Append(batch(0, 5, none))
	p.Append(batch(5, 3, txn(100, 0)))
	lz4 := txn(200, 0)
	lz4.Codec = log.LZ4
	p.Append(batch(8, 2, lz4))
	p.Append(batch(10, 2, none))
	p.Append(kafkadir.Control(12, true, 100, 0, ts(12)))
	p.Append(batch(13, 2, txn(300, 0)))
	p.Append(kafkadir.Control(15, false, 200, 0, ts(15)))
	p.Abort(200, 8, 15, 13)
	p.Roll(16)
	p.Append(batch(16, 3, txn(300, 2)))
	p.Append(kafkadir.Control(19, false, 300, 0, ts(19)))
	p.Abort(300, 13, 19, 20)
	p.Append(batch(20, 3, none))
	p.Append(batch(23, 2, txn(400, 0)))
	p.Append(batch(25, 1, none))
	end, lso = 26, 23
	_, err := p.Write(kafkadir.Files{TopicID: strata.TopicID{9}})
	require.NoError(t, err)
	// The producer state a broker's clean shutdown leaves at the end
	// offset: the open transaction among it.
	snap := kafkadir.Snapshot([]kafkadir.ProducerEntry{
		{ProducerID: 100, LastSequence: 2, LastOffset: 7, OffsetDelta: 2, Timestamp: ts(5).UnixMilli() + 2, CoordinatorEpoch: 7, TxnFirstOffset: -1},
		{ProducerID: 200, LastSequence: 1, LastOffset: 9, OffsetDelta: 1, Timestamp: ts(8).UnixMilli() + 1, CoordinatorEpoch: 7, TxnFirstOffset: -1},
		{ProducerID: 300, LastSequence: 4, LastOffset: 18, OffsetDelta: 2, Timestamp: ts(16).UnixMilli() + 2, CoordinatorEpoch: 7, TxnFirstOffset: -1},
		{ProducerID: 400, LastSequence: 1, LastOffset: 24, OffsetDelta: 1, Timestamp: ts(23).UnixMilli() + 1, CoordinatorEpoch: -1, TxnFirstOffset: 23},
	})
	require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%020d.snapshot", end)), snap, 0o644))
	for _, off := range all {
		aborted := (off >= 8 && off <= 9) || (off >= 13 && off <= 18)
		if off < lso && !aborted {
			committed = append(committed, off)
		}
	}
	return all, committed, end, lso
}

// TestKafkaWrittenTransactions opens a partition Kafka wrote with
// committed, aborted (one across two segments) and open transactions:
// every read path gives every data record under ReadUncommitted, and
// under ReadCommitted those of committed transactions and plain batches
// below the last stable offset. Kafka's .txnindex files and producer
// snapshot are read as they are. After a crash, Open aborts the open
// transaction (its marker at 26), as it does its own.
func TestKafkaWrittenTransactions(t *testing.T) {
	for _, crashed := range []bool{false, true} {
		t.Run(fmt.Sprint("crashed=", crashed), func(t *testing.T) {
			dir := t.TempDir()
			all, committed, end, lso := kafkaTxnPartition(t, filepath.Join(dir, "k-0"))
			if crashed {
				// The open transaction aborted: its records go, the
				// record after it is stable, the marker takes 26.
				committed = append(committed, 25)
				end, lso = end+1, end+1
			}
			idx, err := os.ReadFile(filepath.Join(dir, "k-0", "00000000000000000016.txnindex"))
			require.NoError(t, err)
			require.Len(t, idx, 34, "one aborted transaction, as Kafka writes it")
			_, err = os.Stat(filepath.Join(dir, "k-0", "00000000000000000000.txnindex"))
			require.NoError(t, err)
			_, err = strata.RebuildRegistry(dir)
			require.NoError(t, err)
			if !crashed {
				require.NoError(t, os.WriteFile(filepath.Join(dir, ".clean-shutdown"), nil, 0o644))
			}
			s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever, Logger: logOnFailure(t)})
			require.NoError(t, err)
			defer s.Close()

			for _, tt := range []struct {
				iso  strata.Isolation
				want []int64
				end  int64
			}{
				{strata.ReadUncommitted, all, end},
				{strata.ReadCommitted, committed, lso},
			} {
				v := s.View(tt.iso)
				got, err := v.ListOffsets("k", 0, strata.Latest)
				require.NoError(t, err)
				require.Equal(t, tt.end, got, "%v end", tt.iso)
				for off := int64(0); off <= end; off += 3 {
					recs, err := v.Read(context.Background(), "k", 0, off, 1000)
					require.NoError(t, err)
					require.Equal(t, from(tt.want, off), kafkaOffsets(t, recs), "%v Read from %d", tt.iso, off)
					var scanned []strata.Record
					for r, err := range v.Scan("k", 0, off) {
						require.NoError(t, err)
						scanned = append(scanned, cloneKafka(r))
					}
					require.Equal(t, from(tt.want, off), kafkaOffsets(t, scanned), "%v Scan from %d", tt.iso, off)
				}
				var got2 []int64
				for off := int64(0); off < tt.end; off++ {
					r, err := v.Get("k", 0, off)
					if errors.Is(err, strata.ErrNoRecord) {
						continue
					}
					require.NoError(t, err, "%v Get %d", tt.iso, off)
					got2 = append(got2, r.Offset)
				}
				require.Equal(t, from(tt.want, 0), got2, "%v Get", tt.iso)
			}
		})
	}
}

// kafkaOffsets returns the offsets of records of a Kafka-written
// partition, checking that each holds its own value.
func kafkaOffsets(t *testing.T, recs []strata.Record) []int64 {
	t.Helper()
	var out []int64
	for _, r := range recs {
		want := kafkadir.Records(r.Offset, 1, kafkaEpoch)[0]
		require.Equal(t, string(want.Value), string(r.Value), "offset %d", r.Offset)
		out = append(out, r.Offset)
	}
	return out
}

// cloneKafka copies what kafkaOffsets checks of r.
func cloneKafka(r strata.Record) strata.Record {
	return strata.Record{Offset: r.Offset, Value: append([]byte(nil), r.Value...)}
}
