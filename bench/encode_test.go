package bench

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata/internal/cputime"
	"github.com/stratalog/strata/log"
)

// The batches of the encoder comparison are an idempotent producer's (kgo's
// default): producer id 1, epoch 0, base sequence 0. Without a producer id
// kgo writes base sequence 0 where Kafka's Java client and Strata write -1
// (RecordBatch.NO_SEQUENCE), so only idempotent batches can be compared byte
// for byte.
const (
	encProducerID    = 1
	encProducerEpoch = 0
	encBaseSequence  = 0
)

// encodeCases are the batches BenchmarkEncode encodes: records of a 16-byte
// key and a 100-byte value, with no headers or two small ones.
var encodeCases = []struct{ records, headers int }{
	{100, 0},
	{100, 2},
	{1, 0},
}

// encodeInput is one case's records, as each encoder takes them.
type encodeInput struct {
	strata []log.Record
	franz  []kgo.Record
}

// newEncodeInput makes n records with h headers each, a millisecond apart.
func newEncodeInput(n, h int) encodeInput {
	base := time.UnixMilli(1_700_000_000_000)
	in := encodeInput{strata: make([]log.Record, n), franz: make([]kgo.Record, n)}
	for i := range n {
		key := fmt.Appendf(nil, "key-%012d", i) // 16 bytes
		value := bytes.Repeat([]byte{byte('a' + i%26)}, 100)
		ts := base.Add(time.Duration(i) * time.Millisecond)
		sr := log.Record{Key: key, Value: value, Timestamp: ts}
		fr := kgo.Record{Key: key, Value: value, Timestamp: ts}
		for j := range h {
			hk, hv := fmt.Sprintf("h%d", j), fmt.Appendf(nil, "v-%06d", i)
			sr.Headers = append(sr.Headers, log.Header{Key: hk, Value: hv})
			fr.Headers = append(fr.Headers, kgo.RecordHeader{Key: hk, Value: hv})
		}
		in.strata[i], in.franz[i] = sr, fr
	}
	return in
}

// strataOptions are the batch options of Strata's side: the producer fields
// of the comparison.
var strataOptions = log.BatchOptions{
	Idempotent:    true,
	ProducerID:    encProducerID,
	ProducerEpoch: encProducerEpoch,
	BaseSequence:  encBaseSequence,
}

// encodeStrata is Strata's encoder, as partition.Append calls it.
func encodeStrata(dst []byte, recs []log.Record) []byte {
	out, err := log.EncodeBatch(dst, recs, strataOptions)
	if err != nil {
		panic(err)
	}
	return out
}

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// encodeKgo is kgo's produce path for one batch, which kgo does not export:
// the per-record numbers recBatch.appendRecord works out as it buffers a
// record (recordNumbersAt, kept in the record's LeaderEpoch and Offset
// fields, as kgo keeps them), then seqRecBatch.appendTo and
// promisedRec.appendTo (pkg/kgo/sink.go, franz-go v1.22.3) with kbin,
// without the produce request's length prefix in front of the batch and
// without compression.
func encodeKgo(dst []byte, recs []kgo.Record) []byte {
	first := recs[0].Timestamp.UnixNano() / 1e6
	var wire int32
	var maxDelta int64
	for i := range recs {
		r := &recs[i]
		tsDelta := r.Timestamp.UnixNano()/1e6 - first
		if i == 0 {
			tsDelta = 0
		}
		l := 1 + kbin.VarlongLen(tsDelta) + kbin.VarintLen(int32(i)) +
			kbin.VarintLen(int32(len(r.Key))) + len(r.Key) +
			kbin.VarintLen(int32(len(r.Value))) + len(r.Value) +
			kbin.VarintLen(int32(len(r.Headers)))
		for _, h := range r.Headers {
			l += kbin.VarintLen(int32(len(h.Key))) + len(h.Key) + kbin.VarintLen(int32(len(h.Value))) + len(h.Value)
		}
		r.LeaderEpoch, r.Offset = int32(l), tsDelta
		wire += int32(kbin.VarintLen(int32(l)) + l)
		maxDelta = max(maxDelta, tsDelta)
	}

	dst = kbin.AppendInt64(dst, 0)                           // firstOffset
	dst = kbin.AppendInt32(dst, log.BatchHeaderSize-12+wire) // length
	dst = kbin.AppendInt32(dst, -1)                          // partitionLeaderEpoch
	dst = kbin.AppendInt8(dst, 2)                            // magic
	crcStart := len(dst)
	dst = kbin.AppendInt32(dst, 0) // crc, filled at the end
	dst = kbin.AppendInt16(dst, 0) // attributes
	dst = kbin.AppendInt32(dst, int32(len(recs)-1))
	dst = kbin.AppendInt64(dst, first)
	dst = kbin.AppendInt64(dst, first+maxDelta)
	dst = kbin.AppendInt64(dst, encProducerID)
	dst = kbin.AppendInt16(dst, encProducerEpoch)
	dst = kbin.AppendInt32(dst, encBaseSequence)
	dst = kbin.AppendArrayLen(dst, len(recs))
	for i := range recs {
		r := &recs[i]
		dst = kbin.AppendVarint(dst, r.LeaderEpoch)
		dst = kbin.AppendInt8(dst, 0)
		dst = kbin.AppendVarlong(dst, r.Offset)
		dst = kbin.AppendVarint(dst, int32(i))
		dst = kbin.AppendVarintBytes(dst, r.Key)
		dst = kbin.AppendVarintBytes(dst, r.Value)
		dst = kbin.AppendVarint(dst, int32(len(r.Headers)))
		for _, h := range r.Headers {
			dst = kbin.AppendVarintString(dst, h.Key)
			dst = kbin.AppendVarintBytes(dst, h.Value)
		}
	}
	kbin.AppendInt32(dst[:crcStart], int32(crc32.Checksum(dst[crcStart+4:], crc32c)))
	return dst
}

// encodeKmsg encodes with franz-go's kmsg types: a kmsg.RecordBatch header
// (its Records left empty), then each record as a kmsg.Record appended
// after it (its Length worked out first, as Kafka requires), then the
// batch's Length and CRC-32C (from the attributes to the end) patched in.
// Appending the records in place saves the copy that RecordBatch.Records
// would cost, and hdrs, reused from call to call, the headers' allocation.
func encodeKmsg(dst []byte, recs []kgo.Record, hdrs *[]kmsg.Header) []byte {
	start := len(dst)
	first := recs[0].Timestamp.UnixMilli()
	maxTs := first
	for i := range recs {
		maxTs = max(maxTs, recs[i].Timestamp.UnixMilli())
	}
	batch := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		LastOffsetDelta:      int32(len(recs) - 1),
		FirstTimestamp:       first,
		MaxTimestamp:         maxTs,
		ProducerID:           encProducerID,
		ProducerEpoch:        encProducerEpoch,
		FirstSequence:        encBaseSequence,
		NumRecords:           int32(len(recs)),
	}
	dst = batch.AppendTo(dst)
	for i := range recs {
		r := &recs[i]
		kr := kmsg.Record{
			TimestampDelta64: r.Timestamp.UnixMilli() - first,
			OffsetDelta:      int32(i),
			Key:              r.Key,
			Value:            r.Value,
		}
		if len(r.Headers) > 0 {
			*hdrs = (*hdrs)[:0]
			for _, h := range r.Headers {
				*hdrs = append(*hdrs, kmsg.Header{Key: h.Key, Value: h.Value})
			}
			kr.Headers = *hdrs
		}
		kr.Length = int32(1 + kbin.VarlongLen(kr.TimestampDelta64) + kbin.VarintLen(kr.OffsetDelta) +
			kbin.VarintLen(int32(len(r.Key))) + len(r.Key) + kbin.VarintLen(int32(len(r.Value))) + len(r.Value) +
			kbin.VarintLen(int32(len(r.Headers))))
		for _, h := range r.Headers {
			kr.Length += int32(kbin.VarintLen(int32(len(h.Key))) + len(h.Key) + kbin.VarintLen(int32(len(h.Value))) + len(h.Value))
		}
		dst = kr.AppendTo(dst)
	}
	b := dst[start:]
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32c))
	return dst
}

// checkEncoders fails b unless every encoder writes the same bytes for in,
// and those bytes read back as in's records.
func checkEncoders(b *testing.B, in encodeInput) []byte {
	want := encodeStrata(nil, in.strata)
	for name, got := range map[string][]byte{
		"franz-go-kgo":  encodeKgo(nil, in.franz),
		"franz-go-kmsg": encodeKmsg(nil, in.franz, new([]kmsg.Header)),
	} {
		if !bytes.Equal(got, want) {
			b.Fatalf("%s writes\n%x\nStrata writes\n%x", name, got, want)
		}
	}
	h, err := log.Validate(want)
	if err != nil {
		b.Fatal(err)
	}
	if h.ProducerID != encProducerID || h.BaseSequence != encBaseSequence || int(h.NumRecords) != len(in.strata) ||
		h.BaseTimestamp != in.strata[0].Timestamp.UnixMilli() {
		b.Fatalf("header %+v", h)
	}
	it, err := log.NewRecordIter(want)
	if err != nil {
		b.Fatal(err)
	}
	var r log.Record
	for i := 0; it.Next(&r); i++ {
		w := in.strata[i]
		if r.Offset != int64(i) || !r.Timestamp.Equal(w.Timestamp) || !bytes.Equal(r.Key, w.Key) ||
			!bytes.Equal(r.Value, w.Value) || len(r.Headers) != len(w.Headers) {
			b.Fatalf("record %d reads back as %+v, want %+v", i, r, w)
		}
	}
	if err := it.Err(); err != nil {
		b.Fatal(err)
	}
	return want
}

// reportCPU reports the process's CPU time per op since cpu0 (from
// processCPU, ok0 if it was measured), which other processes on a shared
// machine disturb less than the wall-clock time.
func reportCPU(b *testing.B, cpu0 time.Duration, ok0 bool) {
	if cpu, ok := cputime.Process(); ok && ok0 {
		b.ReportMetric(float64(cpu-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkEncode encodes the same records into one uncompressed Kafka v2
// batch with Strata's encoder (log.EncodeBatch, which partition.Append
// calls) and with franz-go's two ways (see encodeKgo and encodeKmsg), each
// into a buffer reused from op to op. The encoders are checked first to
// write the very same bytes. Besides the wall-clock time it reports the
// process's CPU time per op (cpu-ns/op), steadier on a shared machine.
// Compare with
//
//	benchstat -col /enc new.txt
func BenchmarkEncode(b *testing.B) {
	for _, c := range encodeCases {
		in := newEncodeInput(c.records, c.headers)
		want := checkEncoders(b, in)
		var hdrs []kmsg.Header
		encoders := []struct {
			name string
			enc  func([]byte) []byte
		}{
			{"strata", func(dst []byte) []byte { return encodeStrata(dst, in.strata) }},
			{"franz-go-kgo", func(dst []byte) []byte { return encodeKgo(dst, in.franz) }},
			{"franz-go-kmsg", func(dst []byte) []byte { return encodeKmsg(dst, in.franz, &hdrs) }},
		}
		for _, e := range encoders {
			b.Run(fmt.Sprintf("records=%d/headers=%d/enc=%s", c.records, c.headers, e.name), func(b *testing.B) {
				buf := make([]byte, 0, len(want))
				b.SetBytes(int64(len(want)))
				b.ReportAllocs()
				cpu0, ok0 := cputime.Process()
				for b.Loop() {
					buf = e.enc(buf[:0])
				}
				reportCPU(b, cpu0, ok0)
				b.ReportMetric(float64(b.N*c.records)/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
}
