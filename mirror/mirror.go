package mirror

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrFenced means another mirror with the same TransactionalID started and
// fenced this one: its open transaction was aborted and it stopped. It is
// not retried, so that two mirrors never take turns.
var ErrFenced = errors.New("mirror: fenced by a newer mirror with the same transactional id")

// Mirror copies topics of a Strata store to a Kafka cluster. Make one with
// New; Run or Once it. A Mirror only reads the store (a ReadOnly one
// works), at ReadCommitted: records of aborted or open transactions are
// not copied. Lag and Stats are safe to call while it runs.
type Mirror struct {
	src  *strata.Store
	view strata.View
	opts Options

	mu struct {
		sync.Mutex
		parts  []*part            // in topic, partition order
		byName map[string][]*part // source topic -> its partitions
		stats  Stats
	}

	// The connection: set by connect, cleared by disconnect, used only by
	// the goroutine in Run or Once.
	cl      *kgo.Client
	adm     *kadm.Client
	running sync.Mutex
	once    bool // the run is Once's
}

// part is one mirrored partition. Its fields are guarded by Mirror.mu.
type part struct {
	src, tgt  string
	partition int32

	syncs   syncList // what the target holds, from its offset syncs
	next    int64    // next source offset to copy: the last copied record's + 1
	scanned int64    // source offsets below this hold no record left to copy
	srcEnd  int64    // the source's last stable offset when last read
	tgtEnd  int64    // the target offset after the last copied record
	copied  int64    // records this Mirror copied

	// loaded says the fields above hold what the target had when this
	// Mirror last connected, plus what it committed since; doubt holds the
	// syncs of a batch whose commit failed, which may or may not have
	// landed. See checkOwnLocked.
	loaded bool
	doubt  []offsetSync
}

// PartitionLag is one mirrored partition's progress.
type PartitionLag struct {
	Topic       string // source topic
	TargetTopic string
	Partition   int
	// SourceEnd is the source's end as a read_committed consumer sees it
	// (the last stable offset); Mirrored is the source offset below which
	// every record is on the target; Lag is SourceEnd - Mirrored, in
	// offsets (a gap left by compaction or a transaction marker counts).
	SourceEnd int64
	Mirrored  int64
	Lag       int64
	// TargetEnd is the target offset after the last copied record.
	TargetEnd int64
	// Copied counts the records this Mirror copied since New.
	Copied int64
}

// Stats are a Mirror's totals since New.
type Stats struct {
	Transactions int64 // committed transactions (batches, under NoTransactions)
	Records      int64 // records copied
	Retries      int64 // failed transactions and connections, each retried
	GroupCommits int64 // group offsets committed to the target
	GroupsActive int64 // group syncs skipped because the target group had members
}

// New returns a Mirror of src's topics that opts selects. It checks opts
// (ErrInvalidOptions) and connects to nothing yet.
func New(src *strata.Store, opts Options) (*Mirror, error) {
	if src == nil {
		return nil, fmt.Errorf("%w: no source store", ErrInvalidOptions)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Mirror{src: src, view: src.View(strata.ReadCommitted), opts: o}
	m.mu.byName = make(map[string][]*part)
	return m, nil
}

// Run mirrors until ctx ends, following new records, topics that match
// and partitions, and committing group offsets every GroupInterval. It
// retries a failed transaction or connection after RetryBackoff, resuming
// from the progress the target holds. It returns nil when ctx ends, and an
// error it does not retry: ErrInvalidOptions, ErrFenced, a source topic in
// Topics that does not exist, damage in the source (strata.ErrCorrupt).
func (m *Mirror) Run(ctx context.Context) error {
	return m.run(ctx, false)
}

// Once copies every selected topic up to the source's end when it starts
// (the last stable offset of each partition), commits group offsets once,
// and returns; it retries as Run does, except that a first connection
// that fails is its error. A Mirror runs one Run or Once at a
// time; Once after Once resumes from the target's progress.
func (m *Mirror) Once(ctx context.Context) error {
	return m.run(ctx, true)
}

func (m *Mirror) run(ctx context.Context, once bool) error {
	if !m.running.TryLock() {
		return errors.New("mirror: already running")
	}
	defer m.running.Unlock()
	m.once = once
	defer m.disconnect()

	var targets map[*part]int64
	var lastTopics, lastGroups time.Time
	connected := false
	for {
		if m.cl == nil {
			if err := m.connect(ctx); err != nil {
				if once && !connected && ctx.Err() == nil {
					// Once does not wait for a cluster it never
					// reached: the address, TLS or SASL is wrong.
					m.disconnect()
					return err
				}
				if stop, err := m.failed(ctx, err); stop {
					return err
				}
				continue
			}
			connected = true
			lastTopics = time.Now()
			if once && targets == nil {
				targets = m.ends()
			}
		}
		if !once && time.Since(lastTopics) >= m.opts.TopicInterval {
			if err := m.refreshTopics(ctx); err != nil {
				if stop, err := m.failed(ctx, err); stop {
					return err
				}
				continue
			}
			lastTopics = time.Now()
		}
		if !once && time.Since(lastGroups) >= m.opts.GroupInterval {
			if err := m.syncGroups(ctx); err != nil {
				if stop, err := m.failed(ctx, err); stop {
					return err
				}
				continue
			}
			lastGroups = time.Now()
		}
		n, err := m.copyBatch(ctx, targets)
		if err != nil {
			if stop, err := m.failed(ctx, err); stop {
				return err
			}
			continue
		}
		if once && m.reached(targets) {
			if err := m.syncGroups(ctx); err != nil {
				if stop, err := m.failed(ctx, err); stop {
					return err
				}
				continue
			}
			return nil
		}
		if n == 0 && !once {
			if !sleep(ctx, m.opts.PollInterval) {
				return nil
			}
		}
	}
}

// failed handles an error of a step: it drops the connection and says
// whether to stop, with the error to return; otherwise it waits
// RetryBackoff.
func (m *Mirror) failed(ctx context.Context, err error) (bool, error) {
	m.disconnect()
	if ctx.Err() != nil {
		return true, m.stopped(ctx)
	}
	if permanent(err) {
		return true, err
	}
	m.mu.Lock()
	m.mu.stats.Retries++
	m.mu.Unlock()
	m.opts.Logger.Warn("mirror: retrying", "err", err, "backoff", m.opts.RetryBackoff)
	if !sleep(ctx, m.opts.RetryBackoff) {
		return true, m.stopped(ctx)
	}
	return false, nil
}

// stopped is what Run or Once returns when ctx ends: nil for Run, whose
// way to stop it is; ctx's error for Once, which did not finish.
func (m *Mirror) stopped(ctx context.Context) error {
	if m.once {
		return fmt.Errorf("mirror: stopped before reaching the source's end: %w", ctx.Err())
	}
	return nil
}

// permanent reports whether err is one that retrying cannot mend.
func permanent(err error) bool {
	switch {
	case errors.Is(err, ErrFenced), errors.Is(err, ErrInvalidOptions),
		errors.Is(err, strata.ErrUnknownTopic), errors.Is(err, strata.ErrCorrupt),
		errors.Is(err, strata.ErrClosed), errors.Is(err, errBadSync),
		errors.Is(err, errTopicMismatch):
		return true
	case errors.Is(err, kerr.SaslAuthenticationFailed),
		errors.Is(err, kerr.TransactionalIDAuthorizationFailed),
		errors.Is(err, kerr.TopicAuthorizationFailed),
		errors.Is(err, kerr.GroupAuthorizationFailed),
		errors.Is(err, kerr.ClusterAuthorizationFailed):
		return true
	}
	return false
}

// fenced turns the errors of a producer another one fenced into ErrFenced.
func fenced(err error) error {
	if errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) {
		return fmt.Errorf("%w: %w", ErrFenced, err)
	}
	return err
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// ends returns each partition's source end, Once's targets.
func (m *Mirror) ends() map[*part]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[*part]int64, len(m.mu.parts))
	for _, p := range m.mu.parts {
		end, err := m.view.ListOffsets(p.src, int(p.partition), strata.Latest)
		if err == nil {
			out[p] = end
		}
	}
	return out
}

func (m *Mirror) reached(targets map[*part]int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p, end := range targets {
		if max(p.next, p.scanned) < end {
			return false
		}
	}
	return true
}

// Lag returns each mirrored partition's progress, the source's end read
// now, in topic and partition order.
func (m *Mirror) Lag() []PartitionLag {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]PartitionLag, 0, len(m.mu.parts))
	for _, p := range m.mu.parts {
		end, err := m.view.ListOffsets(p.src, int(p.partition), strata.Latest)
		if err != nil {
			end = p.srcEnd
		}
		done := max(p.next, p.scanned)
		out = append(out, PartitionLag{
			Topic:       p.src,
			TargetTopic: p.tgt,
			Partition:   int(p.partition),
			SourceEnd:   end,
			Mirrored:    done,
			Lag:         max(end-done, 0),
			TargetEnd:   p.tgtEnd,
			Copied:      p.copied,
		})
	}
	return out
}

// Stats returns the Mirror's totals.
func (m *Mirror) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.stats
}

// connect opens the client, creates the syncs topic and the target topics,
// fences an older mirror of the same transactional id, and loads the
// target's progress.
func (m *Mirror) connect(ctx context.Context) error {
	c, _ := codec(m.opts.Compression)
	opts := slices.Clone(m.opts.ClientOptions)
	opts = append(opts,
		kgo.SeedBrokers(m.opts.Brokers...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(c),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.MaxBufferedRecords(2*m.opts.BatchRecords+1000),
	)
	if !m.opts.NoTransactions {
		opts = append(opts, kgo.TransactionalID(m.opts.TransactionalID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	m.cl, m.adm = cl, kadm.NewClient(cl)
	if err := m.ensureSyncsTopic(ctx); err != nil {
		return err
	}
	if !m.opts.NoTransactions {
		// Loading the producer id fences an older producer of this
		// transactional id and aborts its open transaction, so that
		// the progress read next is final.
		if _, _, err := cl.ProducerID(ctx); err != nil {
			return fenced(fmt.Errorf("mirror: init producer id %q: %w", m.opts.TransactionalID, err))
		}
	}
	loaded, err := m.loadSyncs(ctx)
	if err != nil {
		return err
	}
	m.mu.Lock()
	for _, p := range m.mu.parts {
		if err := p.checkOwnLocked(loaded); err != nil {
			m.mu.Unlock()
			return err
		}
		m.resetLocked(p, loaded)
	}
	m.mu.Unlock()
	return m.refreshTopicsWith(ctx, loaded)
}

// disconnect aborts an open transaction, so that the target's
// read_committed consumers are not held up to the transaction's timeout
// behind it, and closes the client.
func (m *Mirror) disconnect() {
	if m.cl == nil {
		return
	}
	if !m.opts.NoTransactions {
		ctx, cancel := context.WithTimeout(context.Background(), abortTimeout)
		if err := m.cl.AbortBufferedRecords(ctx); err == nil {
			_ = m.cl.EndTransaction(ctx, kgo.TryAbort)
		}
		cancel()
	}
	m.cl.Close()
	m.cl, m.adm = nil, nil
}

// abortTimeout bounds the abort of an open transaction when the mirror
// stops or reconnects; a transaction left open is aborted by the next
// mirror to start, or by the cluster at its timeout.
const abortTimeout = 5 * time.Second

// checkOwnLocked checks, as the Mirror connects again, that the target's
// progress of p is the one it left there: its own last commit, or the batch
// whose commit failed. Anything else means another mirror writes to the
// partition — one with the same transactional id that fenced this one
// (whose broker may answer this one's stale epoch with another error than
// PRODUCER_FENCED), or one with another id — and is ErrFenced: taking the
// partition back would make two mirrors take turns.
func (p *part) checkOwnLocked(loaded map[string]syncList) error {
	if !p.loaded {
		return nil
	}
	got, ok := loaded[string(syncKey(p.tgt, p.partition))].last()
	mine, had := p.syncs.last()
	if ok == had && got == mine {
		return nil
	}
	for _, s := range p.doubt {
		if ok && got == s {
			return nil
		}
	}
	return fmt.Errorf("%w: the progress of %s/%d on the target moved to source offset %d (target %d) without this mirror, which had %d (target %d)",
		ErrFenced, p.tgt, p.partition, got.Upstream, got.Downstream, mine.Upstream, mine.Downstream)
}

// resetLocked sets p's progress from the target's syncs.
func (m *Mirror) resetLocked(p *part, loaded map[string]syncList) {
	p.loaded, p.doubt = true, nil
	p.syncs = loaded[string(syncKey(p.tgt, p.partition))]
	if last, ok := p.syncs.last(); ok {
		p.next, p.tgtEnd = last.Upstream, last.Downstream
	} else {
		p.next, _ = m.view.ListOffsets(p.src, int(p.partition), strata.Earliest)
		p.tgtEnd = 0
	}
	p.scanned = p.next
}
