package broker_test

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// sink is the least a Kafka broker can be, for measuring what kgo costs by
// itself: one partition of benchTopic kept in memory as the batches came,
// with their base offsets set, nothing checked, nothing on disk. Produce
// appends; Fetch returns the stored batches from the one holding the fetch
// offset, up to the request's byte limits, waiting for none.
type sink struct {
	ln net.Listener
	wg sync.WaitGroup

	mu      sync.Mutex
	batches [][]byte
	bases   []int64
	next    int64
}

// startSink serves a sink on a free loopback port until the benchmark ends.
func startSink(b testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := &sink{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer nc.Close()
				_ = s.serve(nc)
			}()
		}
	}()
	b.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return ln.Addr().String()
}

// serve answers one connection's requests in order until it fails.
func (s *sink) serve(nc net.Conn) error {
	var size [4]byte
	var frame, out []byte
	for {
		if _, err := io.ReadFull(nc, size[:]); err != nil {
			return err
		}
		frame = append(frame[:0], make([]byte, binary.BigEndian.Uint32(size[:]))...)
		if _, err := io.ReadFull(nc, frame); err != nil {
			return err
		}
		key, version := int16(binary.BigEndian.Uint16(frame)), int16(binary.BigEndian.Uint16(frame[2:]))
		corr := binary.BigEndian.Uint32(frame[4:])
		body := frame[10+max(int(int16(binary.BigEndian.Uint16(frame[8:]))), 0):]
		req := kmsg.RequestForKey(key)
		if req == nil {
			return errors.New("sink: unknown key")
		}
		req.SetVersion(version)
		if req.IsFlexible() {
			body = body[1:] // kgo sends no header tags
		}
		if err := req.ReadFrom(body); err != nil {
			return err
		}
		resp := s.handle(req, nc.LocalAddr().(*net.TCPAddr))
		if resp == nil {
			continue
		}
		resp.SetVersion(version)
		out = binary.BigEndian.AppendUint32(out[:0], 0)
		out = binary.BigEndian.AppendUint32(out, corr)
		if resp.IsFlexible() && key != kmsg.ApiVersions.Int16() {
			out = append(out, 0)
		}
		out = resp.AppendTo(out)
		binary.BigEndian.PutUint32(out, uint32(len(out)-4))
		if _, err := nc.Write(out); err != nil {
			return err
		}
	}
}

func (s *sink) handle(kreq kmsg.Request, addr *net.TCPAddr) kmsg.Response {
	switch req := kreq.(type) {
	case *kmsg.ApiVersionsRequest:
		resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
		for _, k := range []struct {
			key      kmsg.Key
			min, max int16
		}{
			{kmsg.Produce, 3, 9}, {kmsg.Fetch, 4, 12}, {kmsg.ListOffsets, 1, 6},
			{kmsg.Metadata, 1, 12}, {kmsg.ApiVersions, 0, 3}, {kmsg.InitProducerID, 0, 4},
		} {
			v := kmsg.NewApiVersionsResponseApiKey()
			v.ApiKey, v.MinVersion, v.MaxVersion = k.key.Int16(), k.min, k.max
			resp.ApiKeys = append(resp.ApiKeys, v)
		}
		return resp
	case *kmsg.MetadataRequest:
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		br := kmsg.NewMetadataResponseBroker()
		br.Host, br.Port = addr.IP.String(), int32(addr.Port)
		resp.Brokers = append(resp.Brokers, br)
		t := kmsg.NewMetadataResponseTopic()
		name := benchTopic
		t.Topic = &name
		p := kmsg.NewMetadataResponseTopicPartition()
		p.Replicas, p.ISR = []int32{0}, []int32{0}
		t.Partitions = append(t.Partitions, p)
		resp.Topics = append(resp.Topics, t)
		return resp
	case *kmsg.InitProducerIDRequest:
		resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ProducerID = 1
		return resp
	case *kmsg.ProduceRequest:
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.BaseOffset = s.append(rp.Records)
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		if req.Acks == 0 {
			return nil
		}
		return resp
	case *kmsg.ListOffsetsRequest:
		resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition, sp.Offset = rp.Partition, 0
				if rp.Timestamp == -1 {
					s.mu.Lock()
					sp.Offset = s.next
					s.mu.Unlock()
				}
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp
	case *kmsg.FetchRequest:
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.RecordBatches, sp.HighWatermark = s.read(rp.FetchOffset, int(rp.PartitionMaxBytes))
				sp.LastStableOffset = sp.HighWatermark
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		if len(resp.Topics) == 1 && len(resp.Topics[0].Partitions) == 1 && len(resp.Topics[0].Partitions[0].RecordBatches) == 0 {
			time.Sleep(time.Duration(req.MaxWaitMillis) * time.Millisecond)
		}
		return resp
	}
	return nil
}

// append stores a copy of batch at the end offset and returns its base.
func (s *sink) append(batch []byte) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(batch) < 61 {
		return -1
	}
	b := append([]byte(nil), batch...)
	base := s.next
	binary.BigEndian.PutUint64(b, uint64(base))
	s.next += int64(binary.BigEndian.Uint32(b[23:])) + 1
	s.batches = append(s.batches, b)
	s.bases = append(s.bases, base)
	return base
}

// read returns the batches from the one holding offset, up to max bytes
// (at least one), and the end offset.
func (s *sink) read(offset int64, maxBytes int) ([]byte, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []byte{}
	i := sort.Search(len(s.bases), func(i int) bool { return s.bases[i] > offset }) - 1
	for _, b := range s.batches[max(i, 0):] {
		if len(out) > 0 && len(out)+len(b) > maxBytes {
			break
		}
		out = append(out, b...)
	}
	return out, s.next
}
