package bench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratalog/strata/bench/peers"
	"github.com/stratalog/strata/internal/cputime"
)

// readsRecords is the size of the log the read benchmarks scan and look up
// in, as the comparison's W4 and W5 do.
const readsRecords = 1_000_000

// readsLookups is the number of point reads one op of the lookup benchmark
// makes, so that a -benchtime of a few ops suits both benchmarks.
const readsLookups = 100_000

// readsBatch is the number of records per Append call when the log is
// written (the comparison's W2).
const readsBatch = 100

// readsArena holds every record the read benchmarks write: record i is the
// 116 bytes at i*116, its key (16 B) i big-endian then a hash of i, its
// value (100 B) a generator's words seeded by i, so nothing repeats or
// compresses.
func readsArena(n int) []byte {
	const size = 16 + 100
	arena := make([]byte, n*size)
	for i := range n {
		fillReadsRec(arena[i*size:(i+1)*size], int64(i))
	}
	return arena
}

// fillReadsRec writes record i of readsArena into b, its 116 bytes.
func fillReadsRec(b []byte, i int64) {
	binary.BigEndian.PutUint64(b, uint64(i))
	h := uint64(i)*0x9E3779B97F4A7C15 + 1
	for at := 8; at < len(b); at += 8 {
		h ^= h >> 31
		h *= 0xBF58476D1CE4E5B9
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], h)
		copy(b[at:], w[:])
	}
}

// readsRec is record i of arena.
func readsRec(arena []byte, i int64) (key, value []byte) {
	b := arena[i*116 : (i+1)*116 : (i+1)*116]
	return b[:16:16], b[16:]
}

// BenchmarkReads reproduces the comparison's W4 (a scan of all 1 M
// records) and W5 (point reads at random offsets, one fixed seed) outside
// the program, for Strata's root API (Scan, GetInto) beside bbolt (a cursor
// in one View; a View and Get per lookup), the raw-mmap baseline (a bare
// walk of the records' bytes through a mapping: the ceiling of a scan) and
// the format-floor baseline (Strata's log walked batch by batch, record by
// record, through a mapping of its own, nothing checked: what a reader of
// Kafka's format reaches without Strata's code; its lookups are Strata's),
// through the same peers the program runs. Each log is written as W2
// writes it (Append calls of 100 records) before anything is timed, and
// every record read is compared with what was written. An op is one scan of
// the log, or readsLookups lookups (the same offsets in every run); both
// report ns per record read (ns/rec) and the process's CPU time per op.
//
// op=scan scans a log whose mapping the earlier ops have faulted in;
// op=coldscan reopens the log before each scan (not timed), so that the
// scan maps the file anew and faults its pages in from the page cache (and
// Strata checks each batch's CRC, once per process); op=firstscan writes a
// new log before each scan (not timed) and scans it once, as W4 scans the
// log W2 has just written. Those two report, besides the CPU time, the
// minor page faults per scan (faults/op). Each peer's log is written only
// when a benchmark that reads it runs, so that -bench can pick one
// cheaply.
func BenchmarkReads(b *testing.B) {
	arena := readsArena(readsRecords)
	for _, name := range []string{"strata", "bbolt", "raw-mmap", "format-floor"} {
		var peer peers.Peer
		for _, p := range peers.All() {
			if p.Name == name {
				peer = p
			}
		}
		if peer.Open == nil {
			if name == "raw-mmap" || name == "format-floor" {
				continue // not on this system
			}
			b.Fatalf("no peer %q", name)
		}
		dir := filepath.Join(b.TempDir(), name)
		var l peers.Log
		// written writes the log the first time it is asked for, with b's
		// timer stopped.
		written := func(b *testing.B) peers.Log {
			if l == nil {
				b.StopTimer()
				l = readsWrite(b, peer, dir, arena)
				b.StartTimer()
			}
			return l
		}
		b.Run("op=scan/log="+name, func(b *testing.B) {
			b.ReportAllocs()
			l := written(b)
			cpu0, ok0 := cputime.Process()
			for range b.N {
				readsScan(b, l, arena)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/readsRecords, "ns/rec")
			reportCPU(b, cpu0, ok0)
		})
		b.Run("op=coldscan/log="+name, func(b *testing.B) {
			b.ReportAllocs()
			m := scanMeter{cpuOK: true, faultsOK: true}
			written(b)
			for range b.N {
				b.StopTimer()
				err := l.Close()
				if err == nil {
					l, err = peer.Open(dir, peers.Options{})
				}
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				m.start()
				readsScan(b, l, arena)
				m.stop()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/readsRecords, "ns/rec")
			m.report(b)
		})
		b.Run("op=firstscan/log="+name, func(b *testing.B) {
			b.ReportAllocs()
			m := scanMeter{cpuOK: true, faultsOK: true}
			for k := range b.N {
				b.StopTimer()
				freshDir := filepath.Join(b.TempDir(), fmt.Sprint(k))
				fresh := readsWrite(b, peer, freshDir, arena)
				b.StartTimer()
				m.start()
				readsScan(b, fresh, arena)
				m.stop()
				b.StopTimer()
				if err := errors.Join(fresh.Close(), os.RemoveAll(freshDir)); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/readsRecords, "ns/rec")
			m.report(b)
		})
		b.Run("op=get/log="+name, func(b *testing.B) {
			b.ReportAllocs()
			rng := rand.New(rand.NewPCG(19, 2026))
			var i int64
			bad := false
			check := func(key, value []byte) {
				k, v := readsRec(arena, i)
				if !bytes.Equal(key, k) || !bytes.Equal(value, v) {
					bad = true
				}
			}
			l := written(b)
			cpu0, ok0 := cputime.Process()
			for range b.N {
				for range readsLookups {
					i = rng.Int64N(readsRecords)
					if err := l.Get(i, check); err != nil {
						b.Fatal(i, err)
					}
					if bad {
						b.Fatalf("record %d differs from what was written", i)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/readsLookups, "ns/rec")
			reportCPU(b, cpu0, ok0)
		})
		if l != nil {
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// readsScan scans l from 0 and fails b unless it gives back exactly the
// readsRecords records of arena, in order.
func readsScan(b *testing.B, l peers.Log, arena []byte) {
	var n int64
	bad := false
	if err := l.Scan(0, func(i int64, key, value []byte) bool {
		k, v := readsRec(arena, n)
		if i != n || !bytes.Equal(key, k) || !bytes.Equal(value, v) {
			bad = true
			return false
		}
		n++
		return true
	}); err != nil {
		b.Fatal(err)
	}
	if bad || n != readsRecords {
		b.Fatalf("scan read %d records (mismatch: %v), want %d", n, bad, readsRecords)
	}
}

// readsWrite opens peer's log in dir and writes the readsRecords records of
// arena to it as W2 does, in Append calls of readsBatch records.
func readsWrite(b *testing.B, peer peers.Peer, dir string, arena []byte) peers.Log {
	l, err := peer.Open(dir, peers.Options{})
	if err != nil {
		b.Fatal(err)
	}
	recs := make([]peers.Rec, readsBatch)
	for i := int64(0); i < readsRecords; i += readsBatch {
		for j := range recs {
			recs[j].Key, recs[j].Value = readsRec(arena, i+int64(j))
		}
		if err := l.Append(recs); err != nil {
			b.Fatal(err)
		}
	}
	return l
}

// scanMeter adds up the process's CPU time and minor page faults over the
// parts of a benchmark it is started and stopped around, and reports them
// per op (cpu-ns/op, faults/op): what the scans alone cost, when each op
// also does work that is not timed. Start it with cpuOK and faultsOK true.
type scanMeter struct {
	cpu, cpu0       time.Duration
	faults, faults0 int64
	cpuOK, faultsOK bool
}

func (m *scanMeter) start() {
	var ok, fok bool
	m.cpu0, ok = cputime.Process()
	m.faults0, fok = minorFaults()
	m.cpuOK, m.faultsOK = m.cpuOK && ok, m.faultsOK && fok
}

func (m *scanMeter) stop() {
	cpu, ok := cputime.Process()
	faults, fok := minorFaults()
	m.cpu += cpu - m.cpu0
	m.faults += faults - m.faults0
	m.cpuOK, m.faultsOK = m.cpuOK && ok, m.faultsOK && fok
}

func (m *scanMeter) report(b *testing.B) {
	if m.cpuOK {
		b.ReportMetric(float64(m.cpu)/float64(b.N), "cpu-ns/op")
	}
	if m.faultsOK {
		b.ReportMetric(float64(m.faults)/float64(b.N), "faults/op")
	}
}
