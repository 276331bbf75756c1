package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stratalog/strata/bench/peers"
)

// columns are the peers in the table's order: Strata's first, then the
// peers by name, then the baselines.
func columns(ps []peers.Peer) []peers.Peer {
	cols := slices.Clone(ps)
	rank := func(p peers.Peer) int {
		switch {
		case isStrata(p):
			return 0
		case p.Baseline:
			return 2
		}
		return 1
	}
	slices.SortStableFunc(cols, func(a, b peers.Peer) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	return cols
}

// format writes v as the workload's kind reads.
func format(k kind, v float64) string {
	switch k {
	case secs:
		switch {
		case v < 1e-3:
			return fmt.Sprintf("%.0f µs", v*1e6)
		case v < 1:
			return fmt.Sprintf("%.2f ms", v*1e3)
		}
		return fmt.Sprintf("%.2f s", v)
	case ratio:
		return fmt.Sprintf("%.2f×", v)
	}
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0f k", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// formatCell is a median with its spread (min–max over the runs) and, for
// a workload stopped at the budget, a dagger and what the runs did.
func formatCell(k kind, c cell) string {
	s := format(k, c.Median)
	if c.Runs > 1 {
		lo, hi := format(k, c.Min), format(k, c.Max)
		if u := unit(hi); u != "" && unit(lo) == u {
			lo = strings.TrimSuffix(lo, u)
		}
		s += " (" + lo + "–" + hi + ")"
	}
	if c.Partial {
		s += fmt.Sprintf(" † %s", count(c.Done))
	}
	return s
}

// unit is the unit format ended s with ("", " k", " ms", "×", ...).
func unit(s string) string {
	if strings.HasSuffix(s, "×") {
		return "×"
	}
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		return s[i:]
	}
	return ""
}

// count is n in k or M.
func count(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.2gM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func writeMarkdown(w io.Writer, h header, cfg *config, rs *results) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s · %s %s · %s × %d · -dir %s (%s)\n\n", h.Date, h.Go, h.OS, h.CPU, h.CPUs, h.Dir, h.FS)
	fmt.Fprintf(&b, "    %s\n\n", h.Command)

	cols := columns(cfg.peers)
	b.WriteString("| workload |")
	for _, p := range cols {
		fmt.Fprintf(&b, " %s |", p.Name)
	}
	b.WriteString("\n|---|")
	for range cols {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, wl := range cfg.workloads {
		info := workloadInfos[wl]
		fmt.Fprintf(&b, "| %s |", info.label)
		for _, p := range cols {
			c, ok := rs.cell(wl, p.Name)
			if !ok {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(&b, " %s |", formatCell(info.kind, c))
		}
		b.WriteString("\n")
	}

	b.WriteString("\n| workload | Strata (root API) | best peer | Strata ÷ best | goal | |\n|---|---|---|---|---|---|\n")
	for _, g := range summarize(cfg, rs) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", g.Workload, g.Strata, g.Best, g.Ratio, g.Goal, g.Met)
	}

	b.WriteString("\n")
	legend(&b, cfg, rs)
	_, err := io.WriteString(w, b.String())
	return err
}

// legend says how the figures were made, and how each peer was used.
func legend(b *strings.Builder, cfg *config, rs *results) {
	fmt.Fprintf(b, "%d records of a 16-byte key and a 100-byte value (each a function of its index, generated before timing; every read is checked against it). ", cfg.records)
	fmt.Fprintf(b, "Each cell is the median of %d runs with the range (min–max) in parentheses; in each run every peer runs once, in an order rotated from run to run, in a fresh directory removed after it. ", cfg.runs)
	fmt.Fprintf(b, "† the workload stopped at the -budget of %v and its figure is over what it did (the median count of records, lookups or cycles follows); a W4 or W6 cell is marked so when it read a log that W2 stopped at the budget, with W2's count. ", cfg.budget)
	fmt.Fprintf(b, "W4, W5 (%d lookups at random, one seed) and W6 read the log W2 wrote; W6 times Open and a point read of the last record, not the Close after. ", cfg.lookups)
	fmt.Fprintf(b, "W7 is the median of up to %d cycles per run, each in a new directory removed after it (untimed), not durable. ", cfg.cycles)
	b.WriteString("Close is the time of Close alone after W1 (a Producer flushed before). ")
	b.WriteString("Bytes on disk are measured after that Close: the apparent size (the files' lengths, what the log holds whatever the file system's block size) and, below it, the blocks allocated (st_blocks), which preallocation and block rounding add to. ")
	b.WriteString("Strata ÷ best is Strata's figure over the best peer's (for times and bytes lower is better); the best peer is never a Strata variant or a baseline, nor for W3 a peer in memory.\n\n")
	var costs []string
	for _, wl := range []string{wAppend1, wAppend100, wScan, wGet} {
		if c, ok := rs.cell(wl, noopPeer.Name); ok && c.Median > 0 {
			costs = append(costs, fmt.Sprintf("%s %.1f ns", strings.ToUpper(wl), 1e9/c.Median))
		}
	}
	if len(costs) > 0 {
		fmt.Fprintf(b, "The harness's own cost per record (a log that stores nothing and makes each record again for a read, checked the same way: an upper bound): %s.\n\n", strings.Join(costs, ", "))
	}
	for _, p := range columns(cfg.peers) {
		fmt.Fprintf(b, "- %s: %s\n", p.Name, p.Note)
	}
}

// goalRow is one line of the summary.
type goalRow struct {
	Workload string `json:"workload"`
	Strata   string `json:"strata"`
	Best     string `json:"best"`
	Ratio    string `json:"ratio"`
	Goal     string `json:"goal"`
	Met      string `json:"met"`
}

// summarize compares Strata with the best peer on each workload, against
// the goals.
func summarize(cfg *config, rs *results) []goalRow {
	var rows []goalRow
	for _, wl := range cfg.workloads {
		if wl == wBlocks {
			continue
		}
		info := workloadInfos[wl]
		row := goalRow{Workload: info.label, Strata: "–", Best: "–", Ratio: "–", Met: "–"}
		sc, haveStrata := rs.cell(wl, "strata")
		if haveStrata {
			row.Strata = format(info.kind, sc.Median)
		}
		bestName, bc, haveBest := rs.best(wl, cfg.peers)
		if haveBest {
			row.Best = bestName + " " + format(info.kind, bc.Median)
		}
		if haveStrata && haveBest && bc.Median > 0 {
			row.Ratio = fmt.Sprintf("%.2f×", sc.Median/bc.Median)
		}
		met := func(ok bool) {
			row.Met = "not met"
			if ok {
				row.Met = "met"
			}
		}
		// against is a goal relative to a named peer or the best one.
		against := func(min float64, name string) {
			if name == "" {
				row.Goal = fmt.Sprintf("≥ %.1f× best", min)
				if haveStrata && haveBest {
					met(sc.Median >= min*bc.Median)
				}
				return
			}
			pc, ok := rs.cell(wl, name)
			if !ok {
				row.Goal = "≤ " + name + " (not run)"
				return
			}
			row.Goal = fmt.Sprintf("≤ %s (%s: %.2f×)", name, format(info.kind, pc.Median), sc.Median/pc.Median)
			if haveStrata {
				met(sc.Median <= pc.Median)
			}
		}
		switch wl {
		case wAppend1:
			against(1.7, "")
		case wAppend100:
			against(4.5, "")
		case wDurable:
			against(1.3, "")
			if rc, ok := rs.cell(wl, "raw-file"); ok && haveStrata && rc.Median > 0 {
				row.Goal += fmt.Sprintf("; ≥ 0.9× raw-file (%s: %.2f×)", format(rate, rc.Median), sc.Median/rc.Median)
				if row.Met == "met" || !haveBest {
					met(sc.Median >= 0.9*rc.Median)
				}
			}
			// A write and an fdatasync into zeros already on disk: no
			// log that syncs each call goes above it.
			if fc, ok := rs.cell(wl, "sync-floor"); ok && haveBest && bc.Median > 0 {
				row.Goal += fmt.Sprintf("; sync-floor %s (%.2f× best)", format(rate, fc.Median), fc.Median/bc.Median)
			}
		case wScan:
			against(1.5, "")
			// What a bare walk of the same records through a mapping
			// reaches (raw-mmap), and a plain walk of the Kafka batches
			// Strata wrote, with none of Strata's code (format-floor).
			for _, base := range []string{"raw-mmap", "format-floor"} {
				if mc, ok := rs.cell(wl, base); ok {
					row.Goal += "; " + base + " " + format(rate, mc.Median)
					if haveBest && bc.Median > 0 {
						row.Goal += fmt.Sprintf(" (%.2f× best)", mc.Median/bc.Median)
					}
				}
			}
		case wGet:
			against(3, "")
		case wReopen:
			against(0, "bbolt")
			// The system calls and reads of Strata's files alone: no
			// Open of them goes below it.
			if fc, ok := rs.cell(wl, "layout-floor"); ok {
				row.Goal += "; layout-floor " + format(secs, fc.Median)
				if pc, ok := rs.cell(wl, "bbolt"); ok && pc.Median > 0 {
					row.Goal += fmt.Sprintf(" (%.2f× bbolt)", fc.Median/pc.Median)
				}
			}
		case wCycle, wClose:
			against(0, "tidwall-wal")
		case wBytes:
			row.Goal = "strata-producer ≤ 1.10×"
			if pc, ok := rs.cell(wl, "strata-producer"); ok {
				row.Goal += fmt.Sprintf(" (%s)", format(ratio, pc.Median))
				met(pc.Median <= 1.10)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func writeJSON(w io.Writer, h header, cfg *config, rs *results) error {
	type workload struct {
		ID    string          `json:"id"`
		Label string          `json:"label"`
		Peers map[string]cell `json:"peers"`
	}
	out := struct {
		Header    header            `json:"header"`
		Records   int               `json:"records"`
		Runs      int               `json:"runs"`
		Budget    string            `json:"budget"`
		Workloads []workload        `json:"workloads"`
		Summary   []goalRow         `json:"summary"`
		Notes     map[string]string `json:"notes"`
	}{Header: h, Records: cfg.records, Runs: cfg.runs, Budget: cfg.budget.String(), Summary: summarize(cfg, rs), Notes: map[string]string{}}
	for _, wl := range cfg.workloads {
		wk := workload{ID: wl, Label: workloadInfos[wl].label, Peers: map[string]cell{}}
		for _, p := range append([]peers.Peer{noopPeer}, cfg.peers...) {
			if c, ok := rs.cell(wl, p.Name); ok {
				wk.Peers[p.Name] = c
			}
		}
		out.Workloads = append(out.Workloads, wk)
	}
	for _, p := range cfg.peers {
		out.Notes[p.Name] = p.Note
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
