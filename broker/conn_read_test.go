package broker

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestLargeFrameAllocatesWhatArrives: a size prefix of a large request
// with only a few bytes after it does not make the connection allocate
// the size it claims, only about what has arrived; a large request that
// does arrive whole is read and handled.
func TestLargeFrameAllocatesWhatArrives(t *testing.T) {
	srv := testServer(t)
	const claimed = 64 << 20
	readWith := func(input []byte) (uint64, error) {
		client, server := net.Pipe()
		c := newConn(srv, server)
		go func() {
			_, _ = client.Write(input)
			client.Close()
		}()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := c.read()
		runtime.ReadMemStats(&after)
		server.Close()
		return after.TotalAlloc - before.TotalAlloc, err
	}
	prefix := binary.BigEndian.AppendUint32(nil, claimed)
	alloc, err := readWith(append(prefix, make([]byte, 1000)...))
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.Less(t, alloc, uint64(8<<20), "a %d-byte size prefix and 1000 bytes made the connection allocate %d bytes", claimed, alloc)

	// A request of 3 MiB (an ApiVersions padded with a tagged field)
	// arrives whole and is answered.
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1"
	req.UnknownTags.Set(99, bytes.Repeat([]byte{'x'}, 3<<20))
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("test")).AppendRequest(nil, req, 7)
	client, server := net.Pipe()
	c := newConn(srv, server)
	go func() { c.serve() }()
	go func() { _, _ = client.Write(frame) }()
	var size [4]byte
	_, err = io.ReadFull(client, size[:])
	require.NoError(t, err)
	resp := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err = io.ReadFull(client, resp)
	require.NoError(t, err)
	require.Equal(t, int32(7), int32(binary.BigEndian.Uint32(resp)), "the correlation id")
	client.Close()
}

// BenchmarkReadFrame reads request frames of 512 KiB, 4 MiB and 32 MiB
// from a connection that has them whole, as readFrame does.
func BenchmarkReadFrame(b *testing.B) {
	srv := testServer(b)
	for _, n := range []int{512 << 10, 4 << 20, 32 << 20} {
		b.Run(strconv.Itoa(n>>10)+"KiB", func(b *testing.B) {
			data := make([]byte, n)
			r := &repeatConn{data: data}
			c := newConn(srv, r)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				r.off = 0
				if _, err := c.readFrame(n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// repeatConn is a net.Conn whose reads return data from off, at most
// 64 KiB at a time, as a socket's do.
type repeatConn struct {
	net.Conn
	data []byte
	off  int
}

func (r *repeatConn) Read(p []byte) (int, error) {
	if r.off == len(r.data) {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 64<<10)], r.data[r.off:])
	r.off += n
	return n, nil
}

// readsConn is a net.Conn whose reads come from r, counted.
type readsConn struct {
	net.Conn // nil: only what the reader calls is implemented
	r        io.Reader
	reads    int
}

func (c *readsConn) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

func (c *readsConn) SetReadDeadline(time.Time) error { return nil }

// TestPipelinedRequestsReadTogether: small requests that arrive together
// are read with one read call, not two each (the size, then the frame),
// and each is handled in order.
func TestPipelinedRequestsReadTogether(t *testing.T) {
	srv := testServer(t)
	f := kmsg.NewRequestFormatter()
	var input []byte
	const requests = 20
	for i := range requests {
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(3)
		req.ClientSoftwareName, req.ClientSoftwareVersion = "raw", "1"
		input = append(input, f.AppendRequest(nil, req, int32(i))...)
	}
	nc := &readsConn{r: bytes.NewReader(input)}
	c := newConn(srv, nc)
	done := make(chan []int32)
	go func() {
		var corrs []int32
		for r := range c.out {
			corrs = append(corrs, r.corr)
		}
		done <- corrs
	}()
	require.NoError(t, c.read())
	close(c.out)
	want := make([]int32, requests)
	for i := range want {
		want[i] = int32(i)
	}
	require.Equal(t, want, <-done)
	require.LessOrEqual(t, nc.reads, 2, "one read of the requests, one of the end") // input is under readBufferBytes
}
