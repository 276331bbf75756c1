package main

import (
	"strings"

	"github.com/stratalog/strata/bench/peers"
)

// kind is how a workload's figure reads.
type kind int

const (
	rate  kind = iota // per second: higher is better
	secs              // a time: lower is better
	ratio             // bytes ÷ payload: lower is better
)

// workloadInfo says what a workload's row shows.
type workloadInfo struct {
	label string
	kind  kind
}

var workloadInfos = map[string]workloadInfo{
	wAppend1:   {"W1 append, 1 record per call, no fsync (rec/s)", rate},
	wAppend100: {"W2 append, 100 per call, no fsync (rec/s)", rate},
	wDurable:   {"W3 durable, one fsync per 100-record call (rec/s)", rate},
	wScan:      {"W4 sequential scan from 0 (rec/s)", rate},
	wGet:       {"W5 random point reads (lookups/s)", rate},
	wReopen:    {"W6 reopen, then read the last record", secs},
	wCycle:     {"W7 cold cycle: open a new dir, append 1, read 1, close (per cycle)", secs},
	wClose:     {"Close after W1's single-record appends", secs},
	wBytes:     {"bytes on disk ÷ payload after W1 (apparent size)", ratio},
	wBlocks:    {"allocated blocks ÷ payload after W1", ratio},
}

// results are every run's figures, by workload and peer.
type results struct {
	by map[string]map[string][]result
}

func newResults() *results { return &results{by: map[string]map[string][]result{}} }

func (rs *results) add(peer string, out map[string]result) {
	for w, r := range out {
		if rs.by[w] == nil {
			rs.by[w] = map[string][]result{}
		}
		rs.by[w][peer] = append(rs.by[w][peer], r)
	}
}

// cell is one workload's summary for one peer over the runs.
type cell struct {
	Median  float64 `json:"median"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Runs    int     `json:"runs"`
	Partial bool    `json:"partial,omitempty"` // some run stopped at the budget
	Done    int64   `json:"done"`              // the median of what each run did
}

func (rs *results) cell(w, peer string) (cell, bool) {
	runs := rs.by[w][peer]
	if len(runs) == 0 {
		return cell{}, false
	}
	var vs, done []float64
	c := cell{Runs: len(runs)}
	for _, r := range runs {
		vs = append(vs, r.value)
		done = append(done, float64(r.done))
		c.Partial = c.Partial || r.partial
	}
	c.Min, c.Max = spread(vs)
	c.Median = median(vs)
	c.Done = int64(median(done))
	return c, true
}

// isStrata is a Strata peer (the root API, the Producer, the listener):
// never the "best peer" Strata is measured against.
func isStrata(p peers.Peer) bool { return strings.HasPrefix(p.Name, "strata") }

// best is the best figure of w among the peers Strata is compared with
// (for W3, among those on disk).
func (rs *results) best(w string, ps []peers.Peer) (string, cell, bool) {
	var name string
	var bc cell
	found := false
	for _, p := range ps {
		// A log in memory is durable in name only.
		if isStrata(p) || p.Baseline || (p.InMemory && w == wDurable) {
			continue
		}
		c, ok := rs.cell(w, p.Name)
		if !ok {
			continue
		}
		better := c.Median > bc.Median
		if workloadInfos[w].kind != rate {
			better = c.Median < bc.Median
		}
		if !found || better {
			name, bc, found = p.Name, c, true
		}
	}
	return name, bc, found
}
