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

// readsConn is a net.Conn whose reads come from r, counted, and whose
// writes are kept, as are its deadlines' counts.
type readsConn struct {
	net.Conn // nil: only what the connection calls is implemented
	r        io.Reader
	reads    int
	writes   [][]byte
	// readDeadlines and writeDeadlines count the deadlines set.
	readDeadlines, writeDeadlines int
}

func (c *readsConn) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

func (c *readsConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, append([]byte(nil), p...))
	return len(p), nil
}

func (c *readsConn) SetReadDeadline(time.Time) error {
	c.readDeadlines++
	return nil
}

func (c *readsConn) SetWriteDeadline(time.Time) error {
	c.writeDeadlines++
	return nil
}

// apiVersionsRequests returns n ApiVersions v3 requests, framed one after
// the other, of correlation ids 0 to n-1.
func apiVersionsRequests(n int) []byte {
	f := kmsg.NewRequestFormatter()
	var input []byte
	for i := range n {
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(3)
		req.ClientSoftwareName, req.ClientSoftwareVersion = "raw", "1"
		input = append(input, f.AppendRequest(nil, req, int32(i))...)
	}
	return input
}

// TestPipelinedRequestsReadTogether: small requests that arrive together
// are read with one read call, not two each (the size, then the frame),
// handled in order, and their responses written with one write call, with
// one read deadline for the read that waits for them (and one for the
// read of the end) and one write deadline.
func TestPipelinedRequestsReadTogether(t *testing.T) {
	srv := testServer(t)
	const requests = 20
	input := apiVersionsRequests(requests)
	nc := &readsConn{r: bytes.NewReader(input)}
	c := newConn(srv, nc)
	// The clock stands still: on a loaded machine the 20 requests can take
	// longer than coalesceWait, which would rightly flush before the end.
	stopped := time.Unix(0, 0)
	c.now = func() time.Time { return stopped }
	require.NoError(t, c.read())
	require.Len(t, nc.writes, 1, "one write of the responses")
	var corrs []int32
	for out := nc.writes[0]; len(out) >= 8; {
		n := 4 + int(binary.BigEndian.Uint32(out))
		require.LessOrEqual(t, n, len(out))
		corrs = append(corrs, int32(binary.BigEndian.Uint32(out[4:])))
		out = out[n:]
	}
	want := make([]int32, requests)
	for i := range want {
		want[i] = int32(i)
	}
	require.Equal(t, want, corrs)
	require.LessOrEqual(t, nc.reads, 2, "one read of the requests, one of the end") // input is under readBufferBytes
	require.Equal(t, 2, nc.readDeadlines, "deadlines for the read of the requests and of the end")
	require.Equal(t, 1, nc.writeDeadlines)
}

// TestPipelinedResponseWaitsBounded: a response handled coalesceWait or
// longer before the next request of those that arrived with it is
// written before that request is handled, not held for the others'.
func TestPipelinedResponseWaitsBounded(t *testing.T) {
	srv := testServer(t)
	const requests = 5
	input := apiVersionsRequests(requests)
	nc := &readsConn{r: bytes.NewReader(input)}
	c := newConn(srv, nc)
	now := time.Unix(0, 0)
	c.now = func() time.Time { // each request takes coalesceWait
		now = now.Add(coalesceWait)
		return now
	}
	require.NoError(t, c.read())
	require.Equal(t, requests, len(nc.writes), "one write a response")
	for i, w := range nc.writes {
		require.Equal(t, int32(i), int32(binary.BigEndian.Uint32(w[4:])), "correlation id")
	}
}
