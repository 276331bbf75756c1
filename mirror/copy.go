package mirror

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kgo"
)

// loadSyncs reads the syncs topic to its last stable offset, read
// committed: every partition's syncs, keyed by syncKey.
func (m *Mirror) loadSyncs(ctx context.Context) (map[string]syncList, error) {
	out := make(map[string]syncList)
	starts, err := m.adm.ListStartOffsets(ctx, m.opts.SyncsTopic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("mirror: list offsets of %q: %w", m.opts.SyncsTopic, err)
	}
	ends, err := m.adm.ListCommittedOffsets(ctx, m.opts.SyncsTopic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("mirror: list offsets of %q: %w", m.opts.SyncsTopic, err)
	}
	start, _ := starts.Lookup(m.opts.SyncsTopic, 0)
	end, _ := ends.Lookup(m.opts.SyncsTopic, 0)
	if end.Offset <= start.Offset {
		return out, nil
	}
	opts := slices.Clone(m.opts.ClientOptions)
	opts = append(opts,
		kgo.SeedBrokers(m.opts.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
			m.opts.SyncsTopic: {0: kgo.NewOffset().At(start.Offset)},
		}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Control records come through so that the read sees it has
		// reached the end when the log ends with a transaction marker.
		kgo.KeepControlRecords(),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	defer cl.Close()
	at := start.Offset
	for at < end.Offset {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return nil, fmt.Errorf("mirror: read %q: %w", m.opts.SyncsTopic, ferr)
		}
		var perr error
		fs.EachRecord(func(r *kgo.Record) {
			at = r.Offset + 1
			if r.Attrs.IsControl() || perr != nil {
				return
			}
			s, err := parseSyncValue(r.Value)
			if err == nil {
				_, _, err = parseSyncKey(r.Key)
			}
			if err != nil {
				perr = fmt.Errorf("%s offset %d: %w", m.opts.SyncsTopic, r.Offset, err)
				return
			}
			k := string(r.Key)
			out[k] = out[k].add(s)
		})
		if perr != nil {
			return nil, perr
		}
	}
	return out, nil
}

// pending is one partition's records of a transaction.
type pending struct {
	p    *part
	recs []strata.Record
	krs  []*kgo.Record
}

// copyBatch copies up to BatchRecords records of each partition with
// something to copy in one transaction, with their offset syncs, and
// returns how many it copied. Partitions in targets are copied only up to
// their target (nil: no limit).
func (m *Mirror) copyBatch(ctx context.Context, targets map[*part]int64) (int, error) {
	batch, err := m.read(ctx, targets)
	if err != nil || len(batch) == 0 {
		return 0, err
	}
	txn := !m.opts.NoTransactions
	if txn {
		if err := m.cl.BeginTransaction(); err != nil {
			return 0, fenced(fmt.Errorf("mirror: begin transaction: %w", err))
		}
	}
	var (
		errMu    sync.Mutex
		firstErr error
	)
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			errMu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			errMu.Unlock()
		}
	}
	n := 0
	for _, b := range batch {
		b.krs = make([]*kgo.Record, len(b.recs))
		for i, r := range b.recs {
			kr := &kgo.Record{
				Topic:     b.p.tgt,
				Partition: b.p.partition,
				Key:       r.Key,
				Value:     r.Value,
				Timestamp: r.Timestamp,
			}
			if len(r.Headers) > 0 {
				kr.Headers = make([]kgo.RecordHeader, len(r.Headers))
				for j, h := range r.Headers {
					kr.Headers[j] = kgo.RecordHeader{Key: h.Key, Value: h.Value}
				}
			}
			b.krs[i] = kr
			m.cl.Produce(ctx, kr, promise)
		}
		n += len(b.recs)
	}
	flush := func() error {
		if err := m.cl.Flush(ctx); err != nil {
			return err
		}
		errMu.Lock()
		defer errMu.Unlock()
		return firstErr
	}
	if err := flush(); err != nil {
		return 0, fenced(fmt.Errorf("mirror: produce: %w", err))
	}

	// The offset syncs of the records just acknowledged, in the same
	// transaction: the target's progress moves with its records.
	syncs := make([][]offsetSync, len(batch))
	now := time.Now()
	for i, b := range batch {
		src := make([]int64, len(b.recs))
		tgt := make([]int64, len(b.recs))
		for j := range b.recs {
			src[j], tgt[j] = b.recs[j].Offset, b.krs[j].Offset
		}
		m.mu.Lock()
		prev, ok := b.p.syncs.last()
		syncs[i] = runSyncs(prev, ok, src, tgt)
		b.p.doubt = syncs[i]
		m.mu.Unlock()
		key := syncKey(b.p.tgt, b.p.partition)
		for _, s := range syncs[i] {
			m.cl.Produce(ctx, &kgo.Record{
				Topic:     m.opts.SyncsTopic,
				Partition: 0,
				Key:       key,
				Value:     s.appendValue(make([]byte, 0, syncValueLen)),
				Timestamp: now,
			}, promise)
		}
	}
	if err := flush(); err != nil {
		return 0, fenced(fmt.Errorf("mirror: produce offset syncs: %w", err))
	}
	if txn {
		if err := m.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return 0, fenced(fmt.Errorf("mirror: commit transaction: %w", err))
		}
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	for i, b := range batch {
		b.p.doubt = nil
		for _, s := range syncs[i] {
			b.p.syncs = b.p.syncs.add(s)
		}
		last, _ := b.p.syncs.last()
		b.p.next, b.p.tgtEnd = last.Upstream, last.Downstream
		b.p.scanned = max(b.p.scanned, b.p.next)
		b.p.copied += int64(len(b.recs))
	}
	m.mu.stats.Transactions++
	m.mu.stats.Records += int64(n)
	return n, nil
}

// read returns the records to copy next: up to BatchRecords of each
// partition, read committed, from its progress on.
func (m *Mirror) read(ctx context.Context, targets map[*part]int64) ([]*pending, error) {
	m.mu.Lock()
	parts := slices.Clone(m.mu.parts)
	m.mu.Unlock()
	var out []*pending
	for _, p := range parts {
		end, err := m.view.ListOffsets(p.src, int(p.partition), strata.Latest)
		if err != nil {
			return nil, fmt.Errorf("mirror: %s/%d: %w", p.src, p.partition, err)
		}
		if t, ok := targets[p]; ok {
			end = min(end, t)
		} else if targets != nil {
			continue
		}
		m.mu.Lock()
		p.srcEnd = end
		from, done := p.next, max(p.next, p.scanned)
		m.mu.Unlock()
		if done >= end {
			continue
		}
		recs, err := m.view.Read(ctx, p.src, int(p.partition), from, m.opts.BatchRecords)
		if errors.Is(err, strata.ErrOffsetOutOfRange) {
			start, serr := m.view.ListOffsets(p.src, int(p.partition), strata.Earliest)
			if serr != nil || start <= from {
				return nil, fmt.Errorf("mirror: %s/%d: %w", p.src, p.partition, err)
			}
			// Retention or DeleteRecords removed records the
			// mirror had not copied yet: they are gone.
			m.opts.Logger.Warn("mirror: source records removed before they were copied",
				"topic", p.src, "partition", p.partition, "from", from, "to", start)
			from = start
			m.mu.Lock()
			p.next, p.scanned = start, max(p.scanned, start)
			m.mu.Unlock()
			recs, err = m.view.Read(ctx, p.src, int(p.partition), from, m.opts.BatchRecords)
		}
		if err != nil {
			return nil, fmt.Errorf("mirror: %s/%d: %w", p.src, p.partition, err)
		}
		for len(recs) > 0 && recs[len(recs)-1].Offset >= end {
			recs = recs[:len(recs)-1]
		}
		if len(recs) == 0 {
			// Nothing a read_committed reader sees below end: control
			// records, aborted transactions, compacted gaps.
			m.mu.Lock()
			p.scanned = max(p.scanned, end)
			m.mu.Unlock()
			continue
		}
		out = append(out, &pending{p: p, recs: recs})
	}
	return out, nil
}
