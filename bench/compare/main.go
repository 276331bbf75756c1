// Command compare runs the same workloads on Strata and on the logs a Go
// program might embed instead (the peers of bench/peers), interleaved run
// by run on the same disk, and prints a table of medians with their
// spread, and a summary against the goals Strata sets itself.
//
//	cd bench && go run ./compare                      # everything, markdown
//	go run ./compare -peers strata,bbolt -workloads w4,w5 -runs 3
//	go run ./compare -records 2000 -runs 1 -budget 1s # a smoke test
//
// Every read is checked against what was written; a mismatch, like any
// error, stops the program with a message on stderr and exit status 1.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/stratalog/strata/bench/peers"
)

// config is what the flags say.
type config struct {
	records   int
	runs      int
	budget    time.Duration
	lookups   int
	cycles    int
	peers     []peers.Peer
	workloads []string
	dir       string
	format    string
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// run runs the program with args, the table to stdout, progress to stderr.
func run(args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("compare", flag.ContinueOnError)
	fl.SetOutput(stderr)
	cfg := &config{}
	fl.IntVar(&cfg.records, "records", 1_000_000, "records per append workload (16-byte key, 100-byte value)")
	fl.IntVar(&cfg.runs, "runs", 5, "runs; every peer runs once per run, in an order rotated per run")
	fl.DurationVar(&cfg.budget, "budget", 5*time.Second, "per peer and workload: an append, lookup or cycle workload stops at this time and reports the rate over what it did")
	fl.IntVar(&cfg.lookups, "lookups", 200_000, "W5's random point reads per run (a fixed seed)")
	fl.IntVar(&cfg.cycles, "cycles", 200, "W7's cold cycles per run (fewer if the budget ends first)")
	peerList := fl.String("peers", "", "comma-separated peers to run (default all: "+strings.Join(peerNames(peers.All()), ",")+")")
	wl := fl.String("workloads", "", "comma-separated workloads (default all: "+strings.Join(allWorkloads, ",")+")")
	fl.StringVar(&cfg.dir, "dir", os.TempDir(), "where the logs are written (a fresh directory per run and peer, removed after)")
	fl.StringVar(&cfg.format, "format", "markdown", "output: markdown or json")
	cpuprofile := fl.String("cpuprofile", "", "write a CPU profile of the whole program to this file")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fl.Args())
	}
	if cfg.records < 1 || cfg.runs < 1 || cfg.lookups < 1 || cfg.cycles < 1 || cfg.budget <= 0 {
		return fmt.Errorf("-records, -runs, -lookups and -cycles must be at least 1 and -budget positive")
	}
	if cfg.format != "markdown" && cfg.format != "json" {
		return fmt.Errorf("-format %q: markdown or json", cfg.format)
	}
	var err error
	if cfg.peers, err = pickPeers(*peerList); err != nil {
		return err
	}
	if cfg.workloads, err = pickWorkloads(*wl); err != nil {
		return err
	}

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	root, err := os.MkdirTemp(cfg.dir, "strata-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	hdr := newHeader(cfg, root)

	d := newData(cfg.records)
	noop := noopPeer
	noop.Open = func(string, peers.Options) (peers.Log, error) { return &noopLog{d: d}, nil }

	res := newResults()
	for run := range cfg.runs {
		order := rotate(cfg.peers, run)
		for _, p := range append([]peers.Peer{noop}, order...) {
			fmt.Fprintf(stderr, "run %d/%d: %s\n", run+1, cfg.runs, p.Name)
			r := &runner{cfg: cfg, d: d, peer: p, dir: filepath.Join(root, fmt.Sprintf("run%d-%s", run, p.Name)), out: map[string]result{}}
			if p.Name == noop.Name {
				r.cfg = noopConfig(cfg)
			}
			err := r.run()
			if rerr := os.RemoveAll(r.dir); err == nil {
				err = rerr
			}
			if err != nil {
				return err
			}
			res.add(p.Name, r.out)
		}
	}
	switch cfg.format {
	case "json":
		return writeJSON(stdout, hdr, cfg, res)
	default:
		return writeMarkdown(stdout, hdr, cfg, res)
	}
}

// noopConfig is cfg for the harness's own peer: the workloads whose
// per-record cost it measures.
func noopConfig(cfg *config) *config {
	c := *cfg
	c.workloads = slices.DeleteFunc(slices.Clone(cfg.workloads), func(w string) bool {
		return w != wAppend1 && w != wAppend100 && w != wScan && w != wGet
	})
	return &c
}

func peerNames(ps []peers.Peer) []string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return names
}

func pickPeers(list string) ([]peers.Peer, error) {
	all := peers.All()
	if list == "" {
		return all, nil
	}
	var out []peers.Peer
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(all, func(p peers.Peer) bool { return p.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("-peers: no peer %q (the peers: %s)", name, strings.Join(peerNames(all), ", "))
		}
		if !slices.ContainsFunc(out, func(p peers.Peer) bool { return p.Name == name }) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

func pickWorkloads(list string) ([]string, error) {
	if list == "" {
		return allWorkloads, nil
	}
	var out []string
	for w := range strings.SplitSeq(list, ",") {
		w = strings.ToLower(strings.TrimSpace(w))
		if !slices.Contains(allWorkloads, w) {
			return nil, fmt.Errorf("-workloads: no workload %q (the workloads: %s)", w, strings.Join(allWorkloads, ", "))
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out, nil
}

// rotate is ps started at run's place, so that each run has every peer in
// another position.
func rotate(ps []peers.Peer, run int) []peers.Peer {
	k := run % len(ps)
	return append(slices.Clone(ps[k:]), ps[:k]...)
}
