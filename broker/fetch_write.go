package broker

import (
	"encoding/binary"
	"net"

	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// zeroCopyMin is the size from which a partition's batches are sent from
// the segment's mapping as an iovec of their own; smaller ones are copied
// into the frame, which costs less than an iovec.
const zeroCopyMin = 4 << 10

// fetchResponse is a Fetch response whose record batches alias segment
// mappings pinned until the connection has written it, or dropped
// it: release lets them go. Encoded by AppendTo, as any response, it is
// the same bytes.
type fetchResponse struct {
	*kmsg.FetchResponse
	pins []strata.PinnedBatches
}

// release lets every pinned segment go; again, or on nil, does nothing.
func (r *fetchResponse) release() {
	if r == nil {
		return
	}
	for _, p := range r.pins {
		p.Release()
	}
	r.pins = nil
}

// releaseResponse releases what resp pins, if anything.
func releaseResponse(resp kmsg.Response) {
	if r, ok := resp.(*fetchResponse); ok {
		r.release()
	}
}

// frameBuffers is a response frame as the iovecs of one writev: head is
// the frame's own bytes, with the large record sets between them.
type frameBuffers struct {
	head []byte
	cuts []cut
}

// cut is a record set of a frame: data goes at head[at].
type cut struct {
	at   int
	data []byte
}

// buffers appends the frame's iovecs to bufs.
func (f *frameBuffers) buffers(bufs net.Buffers) net.Buffers {
	from := 0
	for _, c := range f.cuts {
		bufs = append(bufs, f.head[from:c.at], c.data)
		from = c.at
	}
	return append(bufs, f.head[from:])
}

// appendFetchFrame encodes a whole Fetch response frame (size, response
// header, body) into f, with the record sets of at least zeroCopyMin bytes
// as cuts rather than copied. The bytes are those appendResponse gives
// (the size counts the cuts). It returns false, having encoded nothing,
// for a response with fields it does not encode (tagged fields the broker
// never sets, versions outside [4, 12]); appendResponse encodes those.
func appendFetchFrame(f *frameBuffers, corr int32, r *kmsg.FetchResponse) bool {
	v := r.Version
	flex := v >= 12
	if v < 4 || v > 12 || flex && r.UnknownTags.Len() > 0 {
		return false
	}
	for i := range r.Topics {
		t := &r.Topics[i]
		if flex && t.UnknownTags.Len() > 0 {
			return false
		}
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if flex && (p.UnknownTags.Len() > 0 ||
				p.DivergingEpoch.Epoch != -1 || p.DivergingEpoch.EndOffset != -1 || p.DivergingEpoch.UnknownTags.Len() > 0 ||
				p.CurrentLeader.LeaderID != -1 || p.CurrentLeader.LeaderEpoch != -1 || p.CurrentLeader.UnknownTags.Len() > 0 ||
				p.SnapshotID.EndOffset != -1 || p.SnapshotID.Epoch != -1 || p.SnapshotID.UnknownTags.Len() > 0) {
				return false
			}
			for k := range p.AbortedTransactions {
				if flex && p.AbortedTransactions[k].UnknownTags.Len() > 0 {
					return false
				}
			}
		}
	}
	b := f.head[:0]
	f.cuts = f.cuts[:0]
	cutBytes := 0
	b = binary.BigEndian.AppendUint32(b, 0) // the size, set below
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	if flex {
		b = append(b, 0) // ResponseHeader v1's tagged fields
	}
	b = binary.BigEndian.AppendUint32(b, uint32(r.ThrottleMillis))
	if v >= 7 {
		b = binary.BigEndian.AppendUint16(b, uint16(r.ErrorCode))
		b = binary.BigEndian.AppendUint32(b, uint32(r.SessionID))
	}
	b = appendArrayLen(b, len(r.Topics), flex)
	for i := range r.Topics {
		t := &r.Topics[i]
		if flex {
			b = binary.AppendUvarint(b, uint64(len(t.Topic))+1)
		} else {
			b = binary.BigEndian.AppendUint16(b, uint16(len(t.Topic)))
		}
		b = append(b, t.Topic...)
		b = appendArrayLen(b, len(t.Partitions), flex)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			b = binary.BigEndian.AppendUint32(b, uint32(p.Partition))
			b = binary.BigEndian.AppendUint16(b, uint16(p.ErrorCode))
			b = binary.BigEndian.AppendUint64(b, uint64(p.HighWatermark))
			b = binary.BigEndian.AppendUint64(b, uint64(p.LastStableOffset))
			if v >= 5 {
				b = binary.BigEndian.AppendUint64(b, uint64(p.LogStartOffset))
			}
			switch {
			case p.AbortedTransactions == nil && flex:
				b = append(b, 0)
			case p.AbortedTransactions == nil:
				b = binary.BigEndian.AppendUint32(b, ^uint32(0))
			default:
				b = appendArrayLen(b, len(p.AbortedTransactions), flex)
			}
			for _, a := range p.AbortedTransactions {
				b = binary.BigEndian.AppendUint64(b, uint64(a.ProducerID))
				b = binary.BigEndian.AppendUint64(b, uint64(a.FirstOffset))
				if flex {
					b = append(b, 0)
				}
			}
			if v >= 11 {
				b = binary.BigEndian.AppendUint32(b, uint32(p.PreferredReadReplica))
			}
			switch rs := p.RecordBatches; {
			case rs == nil && flex:
				b = append(b, 0)
			case rs == nil:
				b = binary.BigEndian.AppendUint32(b, ^uint32(0))
			default:
				if flex {
					b = binary.AppendUvarint(b, uint64(len(rs))+1)
				} else {
					b = binary.BigEndian.AppendUint32(b, uint32(len(rs)))
				}
				if len(rs) >= zeroCopyMin {
					f.cuts = append(f.cuts, cut{at: len(b), data: rs})
					cutBytes += len(rs)
				} else {
					b = append(b, rs...)
				}
			}
			if flex {
				b = append(b, 0) // the partition's tagged fields
			}
		}
		if flex {
			b = append(b, 0) // the topic's tagged fields
		}
	}
	if flex {
		b = append(b, 0) // the response's tagged fields
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)+cutBytes-4))
	f.head = b
	return true
}

// appendArrayLen appends an array's length: an int32, or for a flexible
// version a compact length (uvarint of the length plus one).
func appendArrayLen(b []byte, n int, flex bool) []byte {
	if flex {
		return binary.AppendUvarint(b, uint64(n)+1)
	}
	return binary.BigEndian.AppendUint32(b, uint32(n))
}
