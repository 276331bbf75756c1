package peers

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"
)

// netPeers are the peers that run a server: kfake, nats-jetstream and
// strata-serve.
var netPeers = []string{"kfake", "nats-jetstream", "strata-serve"}

func peerNamed(t *testing.T, name string) Peer {
	t.Helper()
	for _, p := range All() {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no peer %q registered", name)
	return Peer{}
}

// netRec is record i of the tests: a key and a value that say i.
func netRec(i int) Rec {
	return Rec{Key: fmt.Appendf(nil, "key-%06d", i), Value: fmt.Appendf(nil, "value-%d-%s", i, bytes.Repeat([]byte{'v'}, i%50))}
}

// appendNet appends records [from, from+n) in calls of per records.
func appendNet(t *testing.T, l Log, from, n, per int) {
	t.Helper()
	for i := from; i < from+n; i += per {
		recs := make([]Rec, 0, per)
		for j := i; j < i+per && j < from+n; j++ {
			recs = append(recs, netRec(j))
		}
		if err := l.Append(recs); err != nil {
			t.Fatalf("append %d records at %d: %v", len(recs), i, err)
		}
	}
}

// checkNet checks that l holds exactly records [0, n): a scan from 0 and
// from the middle, an early stop, and point reads.
func checkNet(t *testing.T, l Log, n int) {
	t.Helper()
	for _, from := range []int{0, n / 2, n} {
		next := int64(from)
		err := l.Scan(int64(from), func(i int64, key, value []byte) bool {
			want := netRec(int(i))
			if i != next || !bytes.Equal(key, want.Key) || !bytes.Equal(value, want.Value) {
				t.Fatalf("scan from %d: record %d (want %d) is %q=%q, want %q=%q", from, i, next, key, value, want.Key, want.Value)
			}
			next++
			return true
		})
		if err != nil || next != int64(n) {
			t.Fatalf("scan from %d: ended at %d of %d: %v", from, next, n, err)
		}
	}
	if n > 1 {
		seen := 0
		if err := l.Scan(0, func(int64, []byte, []byte) bool { seen++; return seen < 2 }); err != nil || seen != 2 {
			t.Fatalf("scan stopped after 2: saw %d: %v", seen, err)
		}
	}
	for _, i := range []int{0, n / 3, n - 1} {
		if i < 0 || i >= n {
			continue
		}
		want := netRec(i)
		got := false
		err := l.Get(int64(i), func(key, value []byte) {
			got = bytes.Equal(key, want.Key) && bytes.Equal(value, want.Value)
			if !got {
				t.Errorf("get %d: %q=%q, want %q=%q", i, key, value, want.Key, want.Value)
			}
		})
		if err != nil || !got {
			t.Fatalf("get %d: %v", i, err)
		}
	}
	for _, i := range []int64{-1, int64(n)} {
		if err := l.Get(i, func([]byte, []byte) { t.Errorf("get %d of %d found a record", i, n) }); !errors.Is(err, errNetRange) {
			t.Fatalf("get %d of %d: %v, want errNetRange", i, n, err)
		}
	}
	if err := l.Scan(int64(n)+1, func(int64, []byte, []byte) bool { return true }); !errors.Is(err, errNetRange) {
		t.Fatalf("scan from %d of %d: %v, want errNetRange", n+1, n, err)
	}
}

func TestNetPeersReadWhatWasWritten(t *testing.T) {
	for _, name := range netPeers {
		for _, durable := range []bool{false, true} {
			t.Run(fmt.Sprintf("peer=%s/durable=%v", name, durable), func(t *testing.T) {
				p := peerNamed(t, name)
				l, err := p.Open(t.TempDir(), Options{Durable: durable})
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				checkNet(t, l, 0)
				appendNet(t, l, 0, 3, 1)
				appendNet(t, l, 3, 250, 100)
				appendNet(t, l, 253, 2, 1)
				checkNet(t, l, 255)
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func TestNetPeersReopen(t *testing.T) {
	for _, name := range netPeers {
		p := peerNamed(t, name)
		if p.InMemory {
			continue
		}
		t.Run("peer="+name, func(t *testing.T) {
			dir := t.TempDir()
			l, err := p.Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			appendNet(t, l, 0, 150, 100)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if l, err = p.Open(dir, Options{}); err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			checkNet(t, l, 150)
			appendNet(t, l, 150, 10, 1)
			checkNet(t, l, 160)
		})
	}
}

// TestNetPeersCloseReleases opens and closes each peer many times, and
// checks that its goroutines end and that the port a Kafka peer listened
// on is free again.
func TestNetPeersCloseReleases(t *testing.T) {
	for _, name := range netPeers {
		t.Run("peer="+name, func(t *testing.T) {
			p := peerNamed(t, name)
			before := runtime.NumGoroutine()
			for i := range 8 {
				l, err := p.Open(t.TempDir(), Options{})
				if err != nil {
					t.Fatal(err)
				}
				appendNet(t, l, 0, 2, 1)
				checkNet(t, l, 2)
				var addr string
				if k, ok := l.(*kgoLog); ok {
					addr = k.addr
				}
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				if addr != "" {
					ln, err := net.Listen("tcp", addr)
					if err != nil {
						t.Fatalf("open %d: the port of %s is still held after Close: %v", i, addr, err)
					}
					ln.Close()
				}
			}
			// Goroutines that Close has told to stop may take a moment
			// to return: wait for them, up to a deadline.
			deadline := time.Now().Add(10 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				runtime.Gosched()
			}
			if n := runtime.NumGoroutine(); n > before {
				buf := make([]byte, 1<<20)
				t.Fatalf("%d goroutines after 8 opens and closes, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}
