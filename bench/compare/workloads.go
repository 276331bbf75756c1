package main

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/stratalog/strata/bench/peers"
)

// The workloads, in the order of the table.
const (
	wAppend1   = "w1"
	wAppend100 = "w2"
	wDurable   = "w3"
	wScan      = "w4"
	wGet       = "w5"
	wReopen    = "w6"
	wCycle     = "w7"
	wClose     = "close"
	wBytes     = "bytes"
	wBlocks    = "blocks"
)

var allWorkloads = []string{wAppend1, wAppend100, wDurable, wScan, wGet, wReopen, wCycle, wClose, wBytes, wBlocks}

// result is one workload's figure for one peer in one run.
type result struct {
	value float64
	// partial: the workload stopped at the budget, and value is the rate
	// over the records it did.
	partial bool
	done    int64 // records (or lookups, or cycles) the figure is over
}

// runner runs the workloads on one peer for one run.
type runner struct {
	cfg  *config
	d    *data
	peer peers.Peer
	dir  string // this peer's directory of this run, removed after it
	out  map[string]result
}

// onlyRuns is what a baseline measured on one workload alone (Peer.Only)
// runs: that workload, after what comes before it on the same log.
var onlyRuns = map[string][]string{
	wDurable: {wDurable},
	wScan:    {wAppend100, wScan},
	wReopen:  {wAppend100, wScan, wGet, wReopen},
}

// want reports whether the run does w: asked for, and for a baseline
// measured on one workload alone, that workload or one that comes before it
// on its log (run keeps only that workload's figure).
func (r *runner) want(w string) bool {
	if !slices.Contains(r.cfg.workloads, w) {
		return false
	}
	if only := r.peer.Only; only != "" {
		return slices.Contains(onlyRuns[only], w)
	}
	return true
}

func (r *runner) wantAny(ws ...string) bool {
	return slices.ContainsFunc(ws, r.want)
}

func (r *runner) fail(w string, err error) error {
	return fmt.Errorf("peer %s: %s: %w", r.peer.Name, w, err)
}

// run runs every workload asked for, each on a log of its own where it
// writes one: W1 (then Close and the bytes on disk), W2 (then W4, W5 and
// W6 on the log W2 wrote), W3, W7.
func (r *runner) run() error {
	if r.wantAny(wAppend1, wClose, wBytes, wBlocks) {
		if err := r.runAppend1(); err != nil {
			return err
		}
	}
	if r.wantAny(wAppend100, wScan, wGet, wReopen) {
		if err := r.runBatches(); err != nil {
			return err
		}
	}
	if r.want(wDurable) {
		if err := r.runDurable(); err != nil {
			return err
		}
	}
	if r.want(wCycle) {
		if err := r.runCycles(); err != nil {
			return err
		}
	}
	if only := r.peer.Only; only != "" {
		maps.DeleteFunc(r.out, func(w string, _ result) bool { return w != only })
	}
	return nil
}

// appendAll appends the records in calls of per records until all are
// written or the budget is spent, flushes, and returns the rate.
func (r *runner) appendAll(w string, l peers.Log, per int) (result, error) {
	n := r.d.n
	var recs []peers.Rec // the call's records, cut from the arena
	// Reading the clock costs tens of ns: for single-record calls it is
	// read every 64 calls.
	mask := 0
	if per < 16 {
		mask = 63
	}
	start := time.Now()
	deadline := start.Add(r.cfg.budget)
	res := result{}
	for call, i := 0, 0; i < n; call, i = call+1, i+per {
		j := min(i+per, n)
		recs = r.d.recs(recs, i, j)
		if err := l.Append(recs); err != nil {
			return res, r.fail(w, fmt.Errorf("append of records [%d, %d): %w", i, j, err))
		}
		res.done = int64(j)
		if call&mask == 0 && j < n && time.Now().After(deadline) {
			res.partial = true
			break
		}
	}
	if f, ok := l.(peers.Flusher); ok {
		if err := f.Flush(); err != nil {
			return res, r.fail(w, fmt.Errorf("flush: %w", err))
		}
	}
	res.value = float64(res.done) / time.Since(start).Seconds()
	return res, nil
}

func (r *runner) runAppend1() error {
	dir := filepath.Join(r.dir, "w1")
	l, err := r.peer.Open(dir, peers.Options{})
	if err != nil {
		return r.fail(wAppend1, fmt.Errorf("open: %w", err))
	}
	res, err := r.appendAll(wAppend1, l, 1)
	if err != nil {
		_ = l.Close()
		return err
	}
	r.out[wAppend1] = res
	start := time.Now()
	if err := l.Close(); err != nil {
		return r.fail(wClose, err)
	}
	r.out[wClose] = result{value: time.Since(start).Seconds(), done: res.done}
	if r.peer.InMemory {
		return nil
	}
	apparent, blocks, err := diskUsage(dir)
	if err != nil {
		return r.fail(wBytes, err)
	}
	payload := float64(res.done * recSize)
	r.out[wBytes] = result{value: float64(apparent) / payload, done: res.done, partial: res.partial}
	if blocks >= 0 {
		r.out[wBlocks] = result{value: float64(blocks) / payload, done: res.done, partial: res.partial}
	}
	return nil
}

// runBatches writes W2's log, then scans it (W4), reads records of it at
// random (W5), closes it and times its reopen (W6).
func (r *runner) runBatches() error {
	dir := filepath.Join(r.dir, "w2")
	l, err := r.peer.Open(dir, peers.Options{})
	if err != nil {
		return r.fail(wAppend100, fmt.Errorf("open: %w", err))
	}
	defer func() {
		if l != nil {
			_ = l.Close()
		}
	}()
	res, err := r.appendAll(wAppend100, l, 100)
	if err != nil {
		return err
	}
	if r.want(wAppend100) {
		r.out[wAppend100] = res
	}
	n := res.done
	if n == 0 {
		return nil
	}
	// A log that W2 stopped at the budget is smaller: W4's and W6's
	// figures are marked as W2's is, with its count.
	if r.want(wScan) {
		if r.out[wScan], err = r.scan(l, n); err != nil {
			return err
		}
		r.mark(wScan, res)
	}
	if r.want(wGet) {
		if r.out[wGet], err = r.lookups(l, n); err != nil {
			return err
		}
	}
	err = l.Close()
	l = nil
	if err != nil {
		return r.fail(wAppend100, fmt.Errorf("close: %w", err))
	}
	if r.want(wReopen) && !r.peer.InMemory {
		if r.out[wReopen], err = r.reopen(dir, n); err != nil {
			return err
		}
		r.mark(wReopen, res)
	}
	return nil
}

// mark marks w's figure partial, with w2's count, when W2 stopped at the
// budget.
func (r *runner) mark(w string, w2 result) {
	if w2.partial {
		out := r.out[w]
		out.partial, out.done = true, w2.done
		r.out[w] = out
	}
}

// scan reads the n records from 0 and checks each.
func (r *runner) scan(l peers.Log, n int64) (result, error) {
	next := int64(0)
	var bad error
	start := time.Now()
	err := l.Scan(0, func(i int64, key, value []byte) bool {
		if i != next || !r.d.check(i, key, value) {
			if i != next {
				bad = fmt.Errorf("record %d where %d was due", i, next)
			} else {
				bad = r.d.mismatch("scan", i, key, value)
			}
			return false
		}
		next++
		return true
	})
	elapsed := time.Since(start)
	if err == nil {
		err = bad
	}
	if err == nil && next != n {
		err = fmt.Errorf("scan from 0 gave %d records of the %d written", next, n)
	}
	if err != nil {
		return result{}, r.fail(wScan, err)
	}
	return result{value: float64(n) / elapsed.Seconds(), done: n}, nil
}

// lookups reads cfg.lookups records at random (the same indexes for every
// peer with the same n) and checks each.
func (r *runner) lookups(l peers.Log, n int64) (result, error) {
	rng := rand.New(rand.NewPCG(19, 2026))
	idx := make([]int64, r.cfg.lookups)
	for k := range idx {
		idx[k] = rng.Int64N(n)
	}
	var cur int64
	var bad error
	fn := func(key, value []byte) {
		if bad == nil && !r.d.checkAt(cur, key, value) {
			bad = r.d.mismatch("point read", cur, key, value)
		}
	}
	res := result{}
	start := time.Now()
	deadline := start.Add(r.cfg.budget)
	for k, i := range idx {
		cur = i
		if err := l.Get(i, fn); err != nil {
			return res, r.fail(wGet, fmt.Errorf("get %d: %w", i, err))
		}
		res.done = int64(k + 1)
		if k&1023 == 1023 && time.Now().After(deadline) {
			res.partial = k+1 < len(idx)
			break
		}
	}
	elapsed := time.Since(start)
	if bad != nil {
		return res, r.fail(wGet, bad)
	}
	res.value = float64(res.done) / elapsed.Seconds()
	return res, nil
}

// reopen times Open of the closed log of n records and a point read of its
// last record (so that a peer that loads lazily pays for it); the Close
// after is not timed.
func (r *runner) reopen(dir string, n int64) (result, error) {
	var bad error
	start := time.Now()
	l, err := r.peer.Open(dir, peers.Options{})
	if err != nil {
		return result{}, r.fail(wReopen, fmt.Errorf("open: %w", err))
	}
	err = l.Get(n-1, func(key, value []byte) {
		if !r.d.checkAt(n-1, key, value) {
			bad = r.d.mismatch("get after reopen", n-1, key, value)
		}
	})
	elapsed := time.Since(start)
	err = errors.Join(err, bad, l.Close())
	if err != nil {
		return result{}, r.fail(wReopen, err)
	}
	return result{value: elapsed.Seconds(), done: n}, nil
}

func (r *runner) runDurable() error {
	l, err := r.peer.Open(filepath.Join(r.dir, "w3"), peers.Options{Durable: true})
	if err != nil {
		return r.fail(wDurable, fmt.Errorf("open: %w", err))
	}
	res, err := r.appendAll(wDurable, l, 100)
	err = errors.Join(err, l.Close())
	if err != nil {
		return r.fail(wDurable, err)
	}
	r.out[wDurable] = res
	return nil
}

// runCycles runs cold cycles, each in a new directory (removed after it,
// untimed): open, append one record, read it, close; the figure is the
// run's median cycle.
func (r *runner) runCycles() error {
	root := filepath.Join(r.dir, "w7")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return r.fail(wCycle, err)
	}
	times := make([]float64, 0, r.cfg.cycles)
	var bad error
	fn := func(key, value []byte) {
		if !r.d.checkAt(0, key, value) {
			bad = r.d.mismatch("cycle's read", 0, key, value)
		}
	}
	deadline := time.Now().Add(r.cfg.budget)
	partial := false
	for c := range r.cfg.cycles {
		if c > 0 && time.Now().After(deadline) {
			partial = true
			break
		}
		dir := filepath.Join(root, fmt.Sprint(c))
		start := time.Now()
		l, err := r.peer.Open(dir, peers.Options{})
		if err != nil {
			return r.fail(wCycle, fmt.Errorf("open: %w", err))
		}
		err = l.Append(r.d.recs(nil, 0, 1))
		if f, ok := l.(peers.Flusher); ok && err == nil {
			err = f.Flush()
		}
		if err == nil {
			err = l.Get(0, fn)
		}
		err = errors.Join(err, bad, l.Close())
		times = append(times, time.Since(start).Seconds())
		if err == nil {
			// Untimed: a peer that preallocates its files (raft-wal's
			// segments) would otherwise hold a disk's worth of them.
			err = os.RemoveAll(dir)
		}
		if err != nil {
			return r.fail(wCycle, err)
		}
	}
	r.out[wCycle] = result{value: median(times), partial: partial, done: int64(len(times))}
	return nil
}
