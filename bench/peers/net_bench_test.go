package peers

import (
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stratalog/strata/internal/cputime"
)

// benchPeers are the peers BenchmarkNetPeers measures: the server peers,
// and Strata in process (when registered) as the baseline.
var benchPeers = append([]string{"strata"}, netPeers...)

// benchRecs are n records of a 16-byte key and a 100-byte value.
func benchRecs(n int) []Rec {
	recs := make([]Rec, n)
	for i := range recs {
		recs[i] = Rec{Key: make([]byte, 16), Value: make([]byte, 100)}
		recs[i].Key[0], recs[i].Value[0] = byte(i), byte(i>>8)
	}
	return recs
}

// cpuMeter measures the process's CPU time over a benchmark's loop.
type cpuMeter struct {
	start time.Duration
	ok    bool
}

func startCPU() cpuMeter {
	d, ok := cputime.Process()
	return cpuMeter{d, ok}
}

// report reports the CPU time per op since startCPU (cpu-ns/op).
func (m cpuMeter) report(b *testing.B) {
	if end, ok := cputime.Process(); m.ok && ok && b.N > 0 {
		b.ReportMetric(float64(end-m.start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkNetPeers is the cost of one call of each server peer: an
// Append of 1 and of 100 records (and of 100 durably, but for kfake), a
// Get of a random record of getRecords, a Scan of scanRecords (rec/s, the
// consumer's start included), and the cold cycle: Open in a new directory
// (which starts the server), Append 1, Get it, Close.
func BenchmarkNetPeers(b *testing.B) {
	const getRecords, scanRecords = 10_000, 100_000
	for _, name := range benchPeers {
		var p Peer
		for _, q := range All() {
			if q.Name == name {
				p = q
			}
		}
		if p.Open == nil {
			continue
		}
		open := func(b *testing.B, o Options) Log {
			l, err := p.Open(b.TempDir(), o)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { l.Close() })
			return l
		}
		fill := func(b *testing.B, l Log, n int) {
			recs := benchRecs(100)
			for i := 0; i < n; i += 100 {
				if err := l.Append(recs); err != nil {
					b.Fatal(err)
				}
			}
		}
		appends := []struct {
			batch   int
			durable bool
		}{{1, false}, {100, false}, {100, true}}
		for _, a := range appends {
			if a.durable && p.InMemory {
				continue
			}
			sub := "peer=" + name + "/op=append/batch=" + strconv.Itoa(a.batch)
			if a.durable {
				sub += "/durable"
			}
			b.Run(sub, func(b *testing.B) {
				l := open(b, Options{Durable: a.durable})
				recs := benchRecs(a.batch)
				b.SetBytes(int64(a.batch) * 116)
				b.ReportAllocs()
				cpu := startCPU()
				for b.Loop() {
					if err := l.Append(recs); err != nil {
						b.Fatal(err)
					}
				}
				cpu.report(b)
				b.ReportMetric(float64(b.N*a.batch)/b.Elapsed().Seconds(), "rec/s")
			})
		}
		b.Run("peer="+name+"/op=cycle", func(b *testing.B) {
			recs := benchRecs(1)
			root := b.TempDir()
			b.ReportAllocs()
			i := 0
			cpu := startCPU()
			for b.Loop() {
				i++
				l, err := p.Open(filepath.Join(root, strconv.Itoa(i)), Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Append(recs); err != nil {
					b.Fatal(err)
				}
				if err := l.Get(0, func(key, value []byte) {}); err != nil {
					b.Fatal(err)
				}
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
		})
		b.Run("peer="+name+"/op=get", func(b *testing.B) {
			l := open(b, Options{})
			fill(b, l, getRecords)
			r := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				i := r.Int64N(getRecords)
				if err := l.Get(i, func(key, value []byte) {
					if len(key) != 16 || len(value) != 100 || key[0] != byte(i%100) || value[0] != 0 {
						b.Fatalf("record %d: %d-byte key, %d-byte value", i, len(key), len(value))
					}
				}); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
		})
		b.Run("peer="+name+"/op=scan", func(b *testing.B) {
			l := open(b, Options{})
			fill(b, l, scanRecords)
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				n := 0
				if err := l.Scan(0, func(i int64, key, value []byte) bool {
					n++
					return len(value) == 100
				}); err != nil || n != scanRecords {
					b.Fatal(n, err)
				}
			}
			cpu.report(b)
			b.ReportMetric(float64(b.N*scanRecords)/b.Elapsed().Seconds(), "rec/s")
		})
	}
}
