package peers

import (
	"math/rand/v2"
	"strconv"
	"testing"
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

// BenchmarkNetPeers is the cost of one call of each server peer: an
// Append of 1 and of 100 records (and of 100 durably, but for kfake), a
// Get of a random record of getRecords, and a Scan of scanRecords (rec/s,
// the consumer's start included).
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
				for b.Loop() {
					if err := l.Append(recs); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*a.batch)/b.Elapsed().Seconds(), "rec/s")
			})
		}
		b.Run("peer="+name+"/op=get", func(b *testing.B) {
			l := open(b, Options{})
			fill(b, l, getRecords)
			r := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
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
		})
		b.Run("peer="+name+"/op=scan", func(b *testing.B) {
			l := open(b, Options{})
			fill(b, l, scanRecords)
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				if err := l.Scan(0, func(i int64, key, value []byte) bool {
					n++
					return len(value) == 100
				}); err != nil || n != scanRecords {
					b.Fatal(n, err)
				}
			}
			b.ReportMetric(float64(b.N*scanRecords)/b.Elapsed().Seconds(), "rec/s")
		})
	}
}
