package broker_test

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// keyCountingProxy forwards connections to a broker and counts the
// requests clients send it, by API key: a client's progress that nothing
// on the broker's side shows. Start the broker with AdvertisedAddr set
// to the proxy's Addr so that clients reach every broker through it.
type keyCountingProxy struct {
	ln     net.Listener
	target string
	counts [kmsg.MaxKey + 1]atomic.Int64

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// newKeyCountingProxy listens on a port of 127.0.0.1; call serveTo
// once the broker's address is known. The test's cleanup closes it and
// every connection.
func newKeyCountingProxy(t *testing.T) *keyCountingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &keyCountingProxy{ln: ln}
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *keyCountingProxy) addr() string { return p.ln.Addr().String() }

// count returns how many requests of key have passed.
func (p *keyCountingProxy) count(key kmsg.Key) int64 { return p.counts[key].Load() }

// serveTo accepts connections and forwards each to target.
func (p *keyCountingProxy) serveTo(target string) {
	p.target = target
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := p.ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, b)
			p.mu.Unlock()
			p.wg.Add(2)
			go func() {
				defer p.wg.Done()
				_, _ = io.Copy(c, b)
				c.Close()
			}()
			go func() {
				defer p.wg.Done()
				p.forwardRequests(b, c)
				b.Close()
			}()
		}
	}()
}

// forwardRequests copies size-prefixed requests from c to b, counting
// each by the API key that opens its header.
func (p *keyCountingProxy) forwardRequests(b, c net.Conn) {
	var size [4]byte
	for {
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(size[:])
		if n < 2 || n > 1<<26 {
			return
		}
		frame := make([]byte, 4+n)
		copy(frame, size[:])
		if _, err := io.ReadFull(c, frame[4:]); err != nil {
			return
		}
		if key := binary.BigEndian.Uint16(frame[4:]); key <= uint16(kmsg.MaxKey) {
			p.counts[key].Add(1)
		}
		if _, err := b.Write(frame); err != nil {
			return
		}
	}
}
