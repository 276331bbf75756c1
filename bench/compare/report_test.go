package main

import (
	"strings"
	"testing"

	"github.com/stratalog/strata/bench/peers"
)

// TestSummaryScanCeiling: W4's goal names the raw-mmap and format-floor
// baselines' figures and their ratios to the best peer, and neither is the
// best peer.
func TestSummaryScanCeiling(t *testing.T) {
	cfg := &config{workloads: []string{wScan}}
	for _, p := range peers.All() {
		if p.Name == "strata" || p.Name == "bbolt" || p.Name == "raw-mmap" || p.Name == "format-floor" {
			cfg.peers = append(cfg.peers, p)
		}
	}
	if len(cfg.peers) < 4 {
		t.Skip("no raw-mmap or format-floor peer on this system")
	}
	rs := newResults()
	rs.add("strata", map[string]result{wScan: {value: 12e6}})
	rs.add("bbolt", map[string]result{wScan: {value: 10e6}})
	rs.add("raw-mmap", map[string]result{wScan: {value: 20e6}})
	rs.add("format-floor", map[string]result{wScan: {value: 15e6}})
	rows := summarize(cfg, rs)
	if len(rows) != 1 {
		t.Fatalf("rows: %+v", rows)
	}
	row := rows[0]
	if row.Best != "bbolt 10.00 M" || !strings.Contains(row.Goal, "; raw-mmap 20.00 M (2.00× best); format-floor 15.00 M (1.50× best)") || row.Met != "not met" {
		t.Errorf("W4's summary: %+v", row)
	}
}
