package broker_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata/internal/cputime"
	"github.com/stratalog/strata/log"
)

// The raw benchmarks' load: batches of rawBatchRecords uncompressed
// records of rawValueBytes (about 108 KB a batch), rawInFlight Produce
// requests in flight on one connection, and Fetch replaying a partition of
// rawFetchRecords from offset 0, rawFetchBytes a response.
const (
	rawBatchRecords = 1000
	rawValueBytes   = 100
	rawInFlight     = 16
	rawFetchRecords = 1_000_000
	rawFetchBytes   = 1 << 20
)

// rawServers starts the servers the raw benchmarks compare, each in a
// process of its own (see startRawServer), the first time a sub-benchmark
// asks for it by its name, and stops them when b, the parent benchmark,
// ends.
type rawServers struct {
	b       *testing.B
	servers map[string]*rawServer
	next    map[string]int64 // by name: the end offset of benchTopic's partition 0
}

func newRawServers(b *testing.B) *rawServers {
	return &rawServers{b: b, servers: map[string]*rawServer{}, next: map[string]int64{}}
}

// get returns the server of kind (strata, kfake or sink) named name.
func (r *rawServers) get(b *testing.B, name, kind string) *rawServer {
	s := r.servers[name]
	if s == nil {
		s = startRawServer(b, r.b, kind)
		r.servers[name] = s
	}
	return s
}

// rawConn is a connection of the load generator: it writes pre-encoded
// requests and reads responses into one reused buffer.
type rawConn struct {
	nc  net.Conn
	r   *bufio.Reader
	buf []byte
}

func dialRaw(b *testing.B, addr string) *rawConn {
	nc, err := net.Dial("tcp", addr)
	require.NoError(b, err)
	b.Cleanup(func() { nc.Close() })
	return &rawConn{nc: nc, r: bufio.NewReaderSize(nc, 64<<10)}
}

// readFrame returns the next response frame after its size: the
// correlation id, then the rest. It is valid until the next readFrame.
func (c *rawConn) readFrame() ([]byte, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c.r, size[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > 64<<20 {
		return nil, fmt.Errorf("raw: response of %d bytes", n)
	}
	if cap(c.buf) < n {
		c.buf = make([]byte, n)
	}
	c.buf = c.buf[:n]
	_, err := io.ReadFull(c.r, c.buf)
	return c.buf, err
}

// rawProduceFrame returns a Produce v8 request frame (correlation id 0)
// of one batch of records records to benchTopic's partition 0, with no
// producer id.
func rawProduceFrame(b *testing.B, acks int16, records int) []byte {
	recs := make([]log.Record, records)
	value := make([]byte, rawValueBytes)
	for i := range value {
		value[i] = "abcdefghij"[i%10]
	}
	for i := range recs {
		recs[i] = log.Record{Value: value}
	}
	batch, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: time.Now().UnixMilli()})
	require.NoError(b, err)
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(8)
	req.Acks, req.TimeoutMillis = acks, 30_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = benchTopic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, 0)
}

// rawProduce sends requests copies of frame (see rawProduceFrame), of
// records records, rawInFlight at a time, and checks that each is
// acknowledged without error at the next base offset, *next, which it
// advances.
func rawProduce(b *testing.B, c *rawConn, frame []byte, records, requests int, next *int64) {
	sem := make(chan struct{}, rawInFlight)
	done := make(chan struct{})
	defer close(done)
	werr := make(chan error, 1)
	go func() {
		for i := range requests {
			select {
			case sem <- struct{}{}:
			case <-done:
				werr <- nil
				return
			}
			binary.BigEndian.PutUint32(frame[8:], uint32(i))
			if _, err := c.nc.Write(frame); err != nil {
				werr <- err
				return
			}
		}
		werr <- nil
	}()
	resp := kmsg.NewPtrProduceResponse()
	resp.SetVersion(8)
	for i := range requests {
		body, err := c.readFrame()
		require.NoError(b, err)
		require.Equal(b, uint32(i), binary.BigEndian.Uint32(body), "correlation id")
		resp.Default()
		require.NoError(b, resp.ReadFrom(body[4:]))
		require.Len(b, resp.Topics, 1)
		require.Len(b, resp.Topics[0].Partitions, 1)
		p := resp.Topics[0].Partitions[0]
		require.Equal(b, int16(0), p.ErrorCode, "produce error")
		require.Equal(b, *next, p.BaseOffset, "base offset")
		*next += int64(records)
		<-sem
	}
	require.NoError(b, <-werr)
}

// rawFetch fetches records records or more from benchTopic's partition 0,
// whose end offset is end, one Fetch v11 at a time from offset 0 on,
// again from 0 at the end, and checks that each response has whole,
// consecutive batches from its fetch offset on and the high watermark.
// The batches' bytes are read, but only their headers looked at.
func rawFetch(b *testing.B, c *rawConn, records int, end int64) (got int) {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(11)
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 500, 1, 4*rawFetchBytes
	req.SessionEpoch = -1 // no fetch session
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = benchTopic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = rawFetchBytes
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw"))
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(11)
	var frame []byte
	offset := int64(0)
	for corr := int32(0); got < records; corr++ {
		req.Topics[0].Partitions[0].FetchOffset = offset
		frame = f.AppendRequest(frame[:0], req, corr)
		_, err := c.nc.Write(frame)
		require.NoError(b, err)
		body, err := c.readFrame()
		require.NoError(b, err)
		require.Equal(b, corr, int32(binary.BigEndian.Uint32(body)), "correlation id")
		resp.Default()
		require.NoError(b, resp.ReadFrom(body[4:]))
		require.Equal(b, int16(0), resp.ErrorCode)
		require.Len(b, resp.Topics, 1)
		require.Len(b, resp.Topics[0].Partitions, 1)
		p := resp.Topics[0].Partitions[0]
		require.Equal(b, int16(0), p.ErrorCode, "fetch error")
		require.Equal(b, end, p.HighWatermark, "high watermark")
		from := offset
		for rs := p.RecordBatches; len(rs) >= 61; {
			n := 12 + int(binary.BigEndian.Uint32(rs[8:]))
			if n > len(rs) {
				break // a partial batch at the end
			}
			require.Equal(b, offset, int64(binary.BigEndian.Uint64(rs)), "batch base offset")
			offset += int64(binary.BigEndian.Uint32(rs[23:])) + 1
			rs = rs[n:]
		}
		require.Greater(b, offset, from, "no records fetched from %d", from)
		got += int(offset - from)
		if offset == end {
			offset = 0
		}
	}
	return got
}

// measureRaw starts a raw benchmark's timer and returns what stops it and
// reports, for the records sent or received, beside ns/op (per record), records/s and the CPU time per
// record of the server's process, server-cpu-ns/op, and of the load
// generator's (this process), client-cpu-ns/op.
func measureRaw(b *testing.B, srv *rawServer) (stop func(records int)) {
	b.SetBytes(rawValueBytes)
	b.ReportAllocs()
	scpu := srv.cpu(b)
	ccpu, ok := cputime.Process()
	b.ResetTimer()
	return func(records int) {
		b.StopTimer()
		b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
		b.ReportMetric(float64(srv.cpu(b)-scpu)/float64(records), "server-cpu-ns/op")
		if now, ok2 := cputime.Process(); ok && ok2 {
			b.ReportMetric(float64(now-ccpu)/float64(records), "client-cpu-ns/op")
		}
	}
}

// BenchmarkRawProduce produces batches of 1000 (about 108 KB) or 10
// uncompressed records of 100 B (no producer id) over one connection, 16
// requests in flight, with
// a load generator that sends the same encoded request again and reads
// only the responses, so that the server's cost shows: Strata's broker
// over a store on disk (SyncEvery), kfake and the sink, each in a process
// of its own. ns/op is per record; server-cpu-ns/op is the server
// process's CPU time per record.
func BenchmarkRawProduce(b *testing.B) {
	servers := newRawServers(b)
	for _, server := range []string{"strata", "kfake", "sink"} {
		for _, records := range []int{rawBatchRecords, 10} {
			for _, acks := range []int16{1, -1} {
				b.Run(fmt.Sprintf("server=%s/batch=%d/acks=%d", server, records, acks), func(b *testing.B) {
					srv := servers.get(b, b.Name(), server)
					c := dialRaw(b, srv.addr)
					frame := rawProduceFrame(b, acks, records)
					requests := (b.N + records - 1) / records
					next := servers.next[b.Name()]
					stop := measureRaw(b, srv)
					rawProduce(b, c, frame, records, requests, &next)
					stop(requests * records)
					servers.next[b.Name()] = next
				})
			}
		}
	}
}

// BenchmarkRawFetch fetches a partition of 1 M records of 100 B (batches
// of 1000, uncompressed) from offset 0 on, again and again, over one
// connection, one Fetch of at most 1 MiB at a time, the load generator
// reading each response but only the batches' headers: Strata's broker
// over a store on disk, kfake and the sink, each in a process of its own.
// ns/op is per record; server-cpu-ns/op is the server process's CPU time
// per record.
func BenchmarkRawFetch(b *testing.B) {
	servers := newRawServers(b)
	for _, server := range []string{"strata", "kfake", "sink"} {
		b.Run("server="+server, func(b *testing.B) {
			srv := servers.get(b, server, server)
			c := dialRaw(b, srv.addr)
			if servers.next[server] == 0 {
				next := int64(0)
				rawProduce(b, c, rawProduceFrame(b, 1, rawBatchRecords), rawBatchRecords, rawFetchRecords/rawBatchRecords, &next)
				servers.next[server] = next
			}
			stop := measureRaw(b, srv)
			stop(rawFetch(b, c, b.N, servers.next[server]))
		})
	}
}
