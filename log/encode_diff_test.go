package log_test

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stretchr/testify/require"
)

// refBatch is a reference encoder, written as plainly as the format reads
// (the layout in the javadoc of Kafka's DefaultRecordBatch.java and
// DefaultRecord.java, clients/src/main/java/org/apache/kafka/common/record/):
// every field appended in order, each record encoded into a
// scratch buffer to learn its length. The encoders are checked against it.
// It does not check its input: the callers give it only valid batches.
func refBatch(h log.BatchHeader, recs []log.Record, offDeltas []int64, tsDeltas []int64) []byte {
	var body []byte
	for i := range recs {
		r := &recs[i]
		var rb []byte
		rb = append(rb, 0) // attributes
		rb = log.AppendVarlong(rb, tsDeltas[i])
		rb = log.AppendVarint(rb, int32(offDeltas[i]))
		rb = refBytes(rb, r.Key)
		rb = refBytes(rb, r.Value)
		rb = log.AppendVarint(rb, int32(len(r.Headers)))
		for _, hd := range r.Headers {
			rb = log.AppendVarint(rb, int32(len(hd.Key)))
			rb = append(rb, hd.Key...)
			rb = refBytes(rb, hd.Value)
		}
		body = log.AppendVarint(body, int32(len(rb)))
		body = append(body, rb...)
	}
	be := binary.BigEndian
	var b []byte
	b = be.AppendUint64(b, uint64(h.BaseOffset))
	b = be.AppendUint32(b, uint32(log.BatchHeaderSize-12+len(body)))
	b = be.AppendUint32(b, uint32(h.PartitionLeaderEpoch))
	b = append(b, log.Magic)
	b = be.AppendUint32(b, 0) // CRC, filled in below
	b = be.AppendUint16(b, uint16(h.Attributes))
	b = be.AppendUint32(b, uint32(h.LastOffsetDelta))
	b = be.AppendUint64(b, uint64(h.BaseTimestamp))
	b = be.AppendUint64(b, uint64(h.MaxTimestamp))
	b = be.AppendUint64(b, uint64(h.ProducerID))
	b = be.AppendUint16(b, uint16(h.ProducerEpoch))
	b = be.AppendUint32(b, uint32(h.BaseSequence))
	b = be.AppendUint32(b, uint32(len(recs)))
	b = append(b, body...)
	be.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// refBytes appends b with its length; nil is length -1.
func refBytes(dst, b []byte) []byte {
	if b == nil {
		return log.AppendVarint(dst, -1)
	}
	return append(log.AppendVarint(dst, int32(len(b))), b...)
}

// refEncodeBatch is log.EncodeBatch through refBatch.
func refEncodeBatch(recs []log.Record, opts log.BatchOptions) []byte {
	ts := make([]int64, len(recs))
	offs := make([]int64, len(recs))
	maxTs := int64(math.MinInt64)
	for i := range recs {
		offs[i] = int64(i)
		ts[i] = opts.Now
		if !recs[i].Timestamp.IsZero() {
			ts[i] = recs[i].Timestamp.UnixMilli()
		}
		maxTs = max(maxTs, ts[i])
	}
	h := log.BatchHeader{
		BaseOffset:           opts.BaseOffset,
		PartitionLeaderEpoch: -1,
		LastOffsetDelta:      int32(len(recs) - 1),
		BaseTimestamp:        ts[0],
		MaxTimestamp:         maxTs,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		BaseSequence:         -1,
	}
	if opts.TimestampType == log.LogAppendTime {
		h.Attributes |= log.AttrLogAppendTime
		h.MaxTimestamp = opts.Now
	}
	if opts.Idempotent {
		h.ProducerID, h.ProducerEpoch, h.BaseSequence = opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence
	}
	for i := range ts {
		ts[i] -= h.BaseTimestamp
	}
	return refBatch(h, recs, offs, ts)
}

// refEncodeBatchHeader is log.EncodeBatchWithHeader through refBatch.
func refEncodeBatchHeader(h log.BatchHeader, recs []log.Record) []byte {
	ts := make([]int64, len(recs))
	offs := make([]int64, len(recs))
	for i := range recs {
		offs[i] = recs[i].Offset - h.BaseOffset
		ts[i] = recs[i].Timestamp.UnixMilli() - h.BaseTimestamp
	}
	return refBatch(h, recs, offs, ts)
}

// noise is the random bytes keys and values are cut from.
var noise = func() []byte {
	b := make([]byte, 1<<16)
	_, _ = rand.NewChaCha8([32]byte{}).Read(b)
	return b
}()

// randomBytes returns nil, an empty slice, or random bytes of a length that
// crosses the one-, two- and three-byte length varints.
func randomBytes(rng *rand.Rand) []byte {
	n := 0
	switch rng.IntN(16) {
	case 0:
		return nil
	case 1:
		return []byte{}
	case 2:
		n = 50 + rng.IntN(10000)
	default:
		n = rng.IntN(130)
	}
	at := rng.IntN(len(noise) - n)
	return noise[at : at+n : at+n]
}

// randomTime returns a zero time, one near now, or one far either way,
// sometimes with sub-millisecond precision.
func randomTime(rng *rand.Rand, now int64) time.Time {
	var ms int64
	switch rng.IntN(6) {
	case 0:
		return time.Time{}
	case 1:
		ms = now + rng.Int64N(2000) - 1000
	case 2:
		ms = now + rng.Int64N(1<<40) - 1<<39
	case 3:
		ms = -rng.Int64N(1 << 50)
	case 4:
		ms = rng.Int64N(1<<62) - 1<<61
	default:
		ms = now - rng.Int64N(200)
	}
	return time.UnixMilli(ms).Add(time.Duration(rng.IntN(3)) * 333 * time.Microsecond)
}

// randomRecords returns 1 to 300 random records: keys and values nil, empty,
// small or large, some headers, timestamps zero, near or far.
func randomRecords(rng *rand.Rand, now int64) []log.Record {
	n := 1 + rng.IntN(300)
	if rng.IntN(4) == 0 {
		n = 1 + rng.IntN(3)
	}
	recs := make([]log.Record, n)
	for i := range recs {
		r := &recs[i]
		r.Timestamp = randomTime(rng, now)
		r.Key = randomBytes(rng)
		r.Value = randomBytes(rng)
		if rng.IntN(4) == 0 {
			r.Headers = make([]log.Header, rng.IntN(4))
			for j := range r.Headers {
				r.Headers[j] = log.Header{Key: string(randomBytes(rng)), Value: randomBytes(rng)}
			}
		}
		r.Offset = rng.Int64() // ignored by EncodeBatch
	}
	return recs
}

func TestEncodeBatchMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 1000 {
		now := rng.Int64N(1<<42) - 1<<40
		recs := randomRecords(rng, now)
		opts := log.BatchOptions{Now: now, BaseOffset: rng.Int64N(1 << 40)}
		if rng.IntN(3) == 0 {
			opts.TimestampType = log.LogAppendTime
		}
		if rng.IntN(3) == 0 {
			opts.Idempotent = true
			opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence = rng.Int64(), int16(rng.Uint32()), rng.Int32()
		}
		want := refEncodeBatch(recs, opts)
		prefix := []byte("prefix")
		got, err := log.EncodeBatch(prefix[:len(prefix):len(prefix)], recs, opts)
		require.NoError(t, err, "case %d", i)
		require.Equal(t, prefix, got[:len(prefix)], "case %d", i)
		require.Equal(t, want, got[len(prefix):], "case %d", i)
		// Into a buffer with room, written in place.
		buf := make([]byte, 3, len(want)+3)
		got, err = log.EncodeBatch(buf, recs, opts)
		require.NoError(t, err, "case %d", i)
		require.Equal(t, &buf[:1][0], &got[0], "case %d: buffer reused", i)
		require.Equal(t, want, got[3:], "case %d", i)
		// Into a buffer with room for part of it: grown once, the part
		// written in place carried over.
		buf = make([]byte, 3, 3+rng.IntN(len(want)))
		copy(buf, "abc")
		got, err = log.EncodeBatch(buf, recs, opts)
		require.NoError(t, err, "case %d", i)
		require.Equal(t, []byte("abc"), got[:3], "case %d", i)
		require.Equal(t, want, got[3:], "case %d", i)
	}
}

func TestEncodeBatchWithHeaderMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 1000 {
		now := rng.Int64N(1<<42) - 1<<40
		recs := randomRecords(rng, now)
		h := log.BatchHeader{
			BaseOffset:           rng.Int64N(1 << 40),
			PartitionLeaderEpoch: rng.Int32(),
			Attributes:           int16(rng.IntN(0x80)) &^ log.AttrCompressionMask,
			BaseTimestamp:        now + rng.Int64N(1<<20) - 1<<19,
			MaxTimestamp:         rng.Int64(),
			ProducerID:           rng.Int64(),
			ProducerEpoch:        int16(rng.Uint32()),
			BaseSequence:         rng.Int32(),
		}
		// Offsets rise by 1 to 3 from the base, or by up to 1<<20.
		off := h.BaseOffset + rng.Int64N(3)
		for j := range recs {
			recs[j].Offset = off
			if rng.IntN(10) == 0 {
				off += 1 + rng.Int64N(1<<20)
			} else {
				off += 1 + rng.Int64N(3)
			}
		}
		h.LastOffsetDelta = int32(off - 1 - h.BaseOffset + rng.Int64N(5))
		if rng.IntN(20) == 0 {
			recs = nil
		}
		want := refEncodeBatchHeader(h, recs)
		got, err := log.EncodeBatchWithHeader([]byte("x"), h, recs)
		require.NoError(t, err, "case %d", i)
		require.Equal(t, want, got[1:], "case %d", i)
	}
}

// FuzzEncodeBatch checks EncodeBatch against the reference encoder for
// random records drawn from seed, into a buffer of the fuzzed spare
// capacity: none, part of the batch (the records that fit written in
// place, the rest after one growth) or all of it.
func FuzzEncodeBatch(f *testing.F) {
	f.Add(uint64(1), uint32(0), false, false)
	f.Add(uint64(2), uint32(60), true, false)
	f.Add(uint64(3), uint32(1<<20), false, true)
	f.Add(uint64(4), uint32(200), true, true)
	f.Fuzz(func(t *testing.T, seed uint64, spare uint32, logAppend, idempotent bool) {
		rng := rand.New(rand.NewPCG(seed, seed>>32))
		now := rng.Int64N(1<<42) - 1<<40
		recs := randomRecords(rng, now)
		opts := log.BatchOptions{Now: now, BaseOffset: rng.Int64N(1 << 40)}
		if logAppend {
			opts.TimestampType = log.LogAppendTime
		}
		if idempotent {
			opts.Idempotent = true
			opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence = rng.Int64(), int16(rng.Uint32()), rng.Int32()
		}
		want := refEncodeBatch(recs, opts)
		buf := append(make([]byte, 0, 2+int(spare%(1<<21))), "ab"...)
		got, err := log.EncodeBatch(buf, recs, opts)
		require.NoError(t, err)
		require.Equal(t, "ab", string(got[:2]))
		require.Equal(t, want, got[2:])
		got, h, err := log.EncodeBatchHeader(buf, recs, opts)
		require.NoError(t, err)
		require.Equal(t, want, got[2:])
		wantH, err := log.ReadHeader(want)
		require.NoError(t, err)
		require.Equal(t, wantH, h, "the header as ReadHeader reads it")
	})
}
