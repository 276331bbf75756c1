package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stratalog/strata/bench/peers"
)

// TestRun runs the program at a tiny size on two peers and finds every
// workload's row, and every peer's column, in the table.
func TestRun(t *testing.T) {
	var out, progress bytes.Buffer
	args := []string{"-records", "300", "-runs", "2", "-budget", "1s", "-lookups", "100", "-cycles", "3", "-peers", "strata,tidwall-wal", "-dir", t.TempDir()}
	if err := run(args, &out, &progress); err != nil {
		t.Fatal(err)
	}
	table := out.String()
	for _, w := range allWorkloads {
		if !strings.Contains(table, "| "+workloadInfos[w].label+" |") {
			t.Errorf("no row for %s in\n%s", w, table)
		}
	}
	if !strings.Contains(table, "| workload | strata | tidwall-wal |") {
		t.Errorf("columns are not strata, tidwall-wal:\n%s", table)
	}
	matrix, _, _ := strings.Cut(table, "| workload | Strata (root API)")
	if strings.Contains(matrix, "| – |") {
		t.Errorf("a cell is empty:\n%s", matrix)
	}

	out.Reset()
	if err := run(append(args, "-format", "json", "-runs", "1", "-workloads", "w4,w5"), &out, &progress); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Workloads []struct {
			ID    string          `json:"id"`
			Peers map[string]cell `json:"peers"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Workloads) != 2 || doc.Workloads[0].Peers["strata"].Median <= 0 || doc.Workloads[1].Peers["tidwall-wal"].Runs != 1 {
		t.Fatalf("json: %s", out.Bytes())
	}
}

func TestRunBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-peers", "nope"},
		{"-workloads", "w9"},
		{"-records", "0"},
		{"-format", "csv"},
		{"extra"},
	} {
		if err := run(args, new(bytes.Buffer), new(bytes.Buffer)); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// badLog is a log that gets one record wrong, the way its test asks.
type badLog struct {
	noopLog
	skip  int64 // Scan leaves this record out
	wrong int64 // Get answers this one with the next record
}

func (l *badLog) Scan(from int64, fn func(int64, []byte, []byte) bool) error {
	return l.noopLog.Scan(from, func(i int64, k, v []byte) bool {
		return i == l.skip || fn(i, k, v)
	})
}

func (l *badLog) Get(i int64, fn func([]byte, []byte)) error {
	if i == l.wrong {
		i++
	}
	return l.noopLog.Get(i, fn)
}

// TestMismatch: a record a peer leaves out of a scan, or gets wrong in a
// point read, stops the workload with an error that says which.
func TestMismatch(t *testing.T) {
	d := newData(500)
	for _, tc := range []struct {
		name, workload string
		log            *badLog
		want           string
	}{
		{"scan skips", wScan, &badLog{skip: 42, wrong: -1}, "record 43 where 42 was due"},
		{"get wrong", wGet, &badLog{skip: -1}, "record 0 differs"},
		{"reopen wrong", wReopen, &badLog{skip: -1, wrong: 499}, "record 499 differs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.log.d = d
			cfg := &config{records: 500, runs: 1, budget: time.Minute, lookups: 2000, cycles: 1, workloads: []string{tc.workload}}
			// Every Open gives the same log: the reopen finds the records
			// W2 wrote.
			p := peers.Peer{Name: "bad", Open: func(string, peers.Options) (peers.Log, error) { return tc.log, nil }}
			r := &runner{cfg: cfg, d: d, peer: p, dir: t.TempDir(), out: map[string]result{}}
			err := r.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if errors.Unwrap(err) == nil {
				t.Fatalf("%v wraps nothing", err)
			}
		})
	}
}

// countingLog is a noopLog that counts its reads.
type countingLog struct {
	*noopLog
	scans, gets int
}

func (l *countingLog) Scan(from int64, fn func(i int64, key, value []byte) bool) error {
	l.scans++
	return l.noopLog.Scan(from, fn)
}

func (l *countingLog) Get(i int64, fn func(key, value []byte)) error {
	l.gets++
	return l.noopLog.Get(i, fn)
}

func (l *countingLog) Close() error { return nil }

// TestOnly: a baseline measured on one workload alone runs what comes
// before it on its log, and nothing else, and only its figure is kept; and
// every registered baseline names a workload that can be run alone.
func TestOnly(t *testing.T) {
	cfg := &config{records: 300, runs: 1, budget: time.Second, lookups: 50, cycles: 3, workloads: allWorkloads, dir: t.TempDir()}
	d := newData(cfg.records)
	for _, c := range []struct {
		only               string
		opens, scans, gets int
	}{
		{wDurable, 1, 0, 0},              // W3's own log
		{wScan, 1, 1, 0},                 // W2's, then W4
		{wReopen, 2, 1, cfg.lookups + 1}, // W2's, W4, W5, then W6's reopen
	} {
		l := &countingLog{noopLog: &noopLog{d: d}}
		opens := 0
		p := peers.Peer{Name: c.only + "-only", Baseline: true, Only: c.only, Open: func(string, peers.Options) (peers.Log, error) {
			opens++
			return l, nil
		}}
		r := &runner{cfg: cfg, d: d, peer: p, dir: cfg.dir, out: map[string]result{}}
		if err := r.run(); err != nil {
			t.Fatal(err)
		}
		if opens != c.opens || l.scans != c.scans || l.gets != c.gets {
			t.Errorf("%s alone: opens %d, scans %d, gets %d; want %d, %d, %d", c.only, opens, l.scans, l.gets, c.opens, c.scans, c.gets)
		}
		if _, ok := r.out[c.only]; !ok || len(r.out) != 1 {
			t.Errorf("%s alone: figures kept: %v", c.only, r.out)
		}
	}
	for _, p := range peers.All() {
		if _, ok := onlyRuns[p.Only]; p.Only != "" && (!ok || !p.Baseline) {
			t.Errorf("peer %s: Only %q is not a workload run alone, or the peer is not a baseline", p.Name, p.Only)
		}
	}
}
