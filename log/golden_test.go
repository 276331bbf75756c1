package log_test

import (
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files and fuzz seeds in testdata")

// kafkaGolden is the batch of Kafka's MemoryRecordsTest#testChecksum
// (clients/src/test/java/org/apache/kafka/common/record/MemoryRecordsTest.java)
// for magic 2, uncompressed: records (283843, "key1", "value1") and (1234,
// "key2", "value2") at base offset 0, whose CRC that test expects to be
// 3851219455.
const kafkaGolden = `
00 00 00 00 00 00 00 00 00 00 00 55 ff ff ff ff 02 e5 8c f1 ff 00 00 00 00 00 01 00 00 00 00 00 04 54 c3
00 00 00 00 00 04 54 c3 ff ff ff ff ff ff ff ff ff ff ff ff ff ff 00 00 00 02 20 00 00 00 08 6b 65 79 31
0c 76 61 6c 75 65 31 00 24 00 e1 bf 22 02 08 6b 65 79 32 0c 76 61 6c 75 65 32 00`

// unhex decodes hex digits, ignoring white space.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	require.NoError(t, err)
	return b
}

func goldenRecords() []log.Record {
	return []log.Record{
		{Timestamp: time.UnixMilli(283843), Key: []byte("key1"), Value: []byte("value1")},
		{Timestamp: time.UnixMilli(1234), Key: []byte("key2"), Value: []byte("value2")},
	}
}

func goldenBatch(t testing.TB) []byte {
	t.Helper()
	b, err := log.EncodeBatch(nil, goldenRecords(), log.BatchOptions{})
	require.NoError(t, err)
	return b
}

// checkFile compares got with the file at path, after rewriting the file
// with got under -update.
func checkFile(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run %s -update to create it", t.Name())
	require.Equal(t, want, got)
}

func TestGoldenBatch(t *testing.T) {
	got := goldenBatch(t)
	checkFile(t, filepath.Join("testdata", "golden-batch.bin"), got)
	require.Equal(t, unhex(t, kafkaGolden), got)

	h, err := log.Validate(got)
	require.NoError(t, err)
	require.Equal(t, log.BatchHeader{
		BaseOffset: 0, Length: 85, PartitionLeaderEpoch: -1, Magic: 2, CRC: 3851219455,
		LastOffsetDelta: 1, BaseTimestamp: 283843, MaxTimestamp: 283843,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, NumRecords: 2,
	}, h)
	require.Equal(t, 97, h.Size())
	require.Equal(t, int64(2), h.NextOffset())

	want := goldenRecords()
	for i := range want {
		want[i].Offset = int64(i)
		want[i].Timestamp = want[i].Timestamp.UTC()
	}
	require.Equal(t, want, collect(t, got))
}

// collect reads every record of batch with Records, failing on error.
func collect(t testing.TB, batch []byte) []log.Record {
	t.Helper()
	var recs []log.Record
	for r, err := range log.Records(batch) {
		require.NoError(t, err)
		recs = append(recs, r)
	}
	return recs
}

// fuzzSeeds are the batches written to testdata/fuzz/FuzzBatch.
func fuzzSeeds(t testing.TB) map[string][]byte {
	golden := goldenBatch(t)
	empty, err := log.EncodeBatchWithHeader(nil, log.BatchHeader{
		BaseOffset: 41, LastOffsetDelta: 3, BaseTimestamp: -1, MaxTimestamp: 1700000000000,
		ProducerID: 7, ProducerEpoch: 2, BaseSequence: 40, PartitionLeaderEpoch: 5,
	}, nil)
	require.NoError(t, err)
	headers, err := log.EncodeBatch(nil, []log.Record{
		{Key: nil, Value: []byte{}, Headers: []log.Header{{Key: "a", Value: nil}, {Key: "", Value: []byte{}}}},
		{Key: []byte{}, Value: nil, Headers: []log.Header{{Key: "trace-id", Value: []byte("0123456789abcdef")}}},
	}, log.BatchOptions{BaseOffset: 1 << 40, Now: 1700000000000})
	require.NoError(t, err)
	appendTime, err := log.EncodeBatch(nil, []log.Record{
		{Timestamp: time.UnixMilli(-5), Key: []byte("k"), Value: make([]byte, 200)},
		{Timestamp: time.UnixMilli(99), Value: []byte("v")},
	}, log.BatchOptions{TimestampType: log.LogAppendTime, Now: 1700000000000,
		Idempotent: true, ProducerID: 12345, ProducerEpoch: 3, BaseSequence: 2147483647})
	require.NoError(t, err)
	return map[string][]byte{
		"golden":         golden,
		"golden-trailer": append(append([]byte{}, golden...), golden[:30]...),
		"empty":          empty,
		"headers":        headers,
		"log-append":     appendTime,
		"truncated":      golden[:80],
	}
}

func TestFuzzSeeds(t *testing.T) {
	for name, b := range fuzzSeeds(t) {
		t.Run(name, func(t *testing.T) {
			got := fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", b)
			checkFile(t, filepath.Join("testdata", "fuzz", "FuzzBatch", name), got)
		})
	}
}
