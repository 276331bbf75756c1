package partition

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// Partition is one partition's log: an ordered list of segments, the last of
// which (the active segment) takes appends. It is safe for concurrent use.
//
// Appends are serialised by a mutex. Reads take no lock the writer takes:
// they load an immutable snapshot of the segment list and the end offset
// through atomics, and hold a reference on the segment they read so that a
// segment removed meanwhile is closed only when its last reader lets go.
//
// # Locks
//
// A goroutine that holds more than one takes them in this order, and
// releases none to take an earlier one:
//
//	keysMu → cleanMu → syncMu → mu
//
// keysMu makes builds of the key index (AppendIfLast) one at a time. It is
// held while the build reads the partition, and takes mu briefly at the
// build's start and end; nothing holding another lock takes it.
//
// cleanMu makes compaction (Compact) and Truncate exclusive: they write
// segment files under the same temporary names. It is held for a whole
// cleaning round, reads and writes of segment files included.
//
// syncMu serialises fsyncs of appended data: the group commit's fsync of
// the active segment's .log, the fsyncs of segments that rolls sealed
// (mu.pending), and the recovery point checkpoint written after them
// (checkpoint, which it guards). It is held during that I/O; mu is not,
// so appends go on while an fsync runs. Truncate holds it too (with
// cleanMu and mu), so that no fsync runs on a segment it rewrites.
//
// mu guards the fields in it and serialises appends, rolls, retention,
// DeleteRecords, truncation and compaction's swap, which publish state
// and end. It is held during the I/O those do: writes into the active
// segment, a roll's creation of a segment (which fsyncs the directory),
// retention's and truncation's file removals, renames and directory
// fsyncs. It is never held during an fsync of a segment's data.
//
// group.mu (with group.cond) only coordinates who leads the next group
// commit fsync; appended.mu only hands out wake-up channels. Each is taken
// alone and never held while taking another lock or doing I/O.
//
// bg.tickMu is held by a run of SyncEvery's timer, around its fsync
// (it takes group.mu, syncMu and mu after it); bg.flush by a roll's flush
// goroutine from its start to its end, and by Close after it (see
// background.go).
//
// A method whose name ends in MuLocked needs mu held by its caller, one
// ending in SyncMuLocked syncMu.
type Partition struct {
	fsys vfs.FS
	dir  string
	name string // the directory's base name, "<topic>-<partition>", for errors
	cfg  Config

	mu struct {
		sync.Mutex
		active  *segRef
		pending []*segRef // sealed by a roll, not yet fsynced (each holds a reference)
		closed  bool
		failed  error     // a failed fsync or roll: no more appends
		keys    *keyIndex // nil until AppendIfLast builds it
		// producers is what the partition knows of the producers that
		// wrote to it (AppendProduced, WriteMarker).
		producers producerState
		// snaps are the offsets of the producer state snapshots in the
		// directory, in order; pendingSnaps those taken at rolls, to be
		// written once the segments below them are synced.
		snaps        []int64
		pendingSnaps []pendingSnapshot
		// markerEnd is the offset after the last transaction marker
		// appended (0 if none since Open): a roll makes the segment
		// durable at once if the marker may not be (see rollMuLocked).
		markerEnd int64
		appended  appendCounters
		// flushing says a goroutine fsyncs the segments rolls sealed;
		// ticking that SyncEvery's timer is armed; bgFailed that a
		// background fsync failed, after which neither runs again (see
		// background.go).
		flushing, ticking, bgFailed bool
	}
	state atomic.Pointer[state] // stored with mu held
	start atomic.Int64          // first retained offset; stored with mu held
	end   atomic.Int64          // next offset to assign; stored with mu held
	done  atomic.Bool           // closed: reads fail too
	// unstable holds the transactions that keep the last stable offset
	// down (nil if none); stored with mu held.
	unstable atomic.Pointer[[]txnSpan]

	appended signal // woken whenever the high watermark moves

	cleanMu sync.Mutex // one compaction or truncation at a time

	keysMu        sync.Mutex // one build of the key index at a time
	keysBuildHook func()     // tests: runs once a build has read its first key

	syncMu     sync.Mutex         // one fsync (or flush of sealed segments) at a time
	synced     atomic.Int64       // offsets below this are durable
	visible    atomic.Int64       // the high watermark under SyncAlways: synced, and the decided markers after it
	decided    decidedMarkers     // markers of WriteDecidedMarker not known durable
	group      groupCommit        // who fsyncs next, and who waits for it
	checkpoint recoveryCheckpoint // guarded by syncMu

	bg background // the fsyncs after rolls and SyncEvery's

	stats counters

	follow followState // a read-only partition's refresh state; guarded by mu
}

// groupCommit coordinates SyncAlways appenders: one leader fsyncs, the
// others wait on cond until it is done (gen counts finished fsyncs).
type groupCommit struct {
	mu      sync.Mutex
	cond    sync.Cond // L is &mu, set by Open
	running bool
	gen     uint64
}

// state is the immutable snapshot readers load: the segments in offset order.
type state struct {
	segs []*segRef
}

// segRef is a reference-counted segment. The partition holds one reference
// while the segment is in its list; each read holds one more. When the count
// reaches zero the segment is closed, and its files removed if the partition
// dropped it for good.
type segRef struct {
	seg    *segment.Segment
	refs   atomic.Int32
	remove atomic.Bool // delete the files once the last reference goes
}

func newRef(s *segment.Segment) *segRef {
	r := &segRef{seg: s}
	r.refs.Store(1)
	return r
}

// acquire takes a reference unless the count has already reached zero (the
// segment is gone: reload the state).
func (r *segRef) acquire() bool {
	for {
		n := r.refs.Load()
		if n <= 0 {
			return false
		}
		if r.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference; the last one closes the segment (and removes
// its files if it was dropped from the partition).
func (r *segRef) release() error {
	if r.refs.Add(-1) != 0 {
		return nil
	}
	if r.remove.Load() {
		return r.seg.Delete()
	}
	return r.seg.Close()
}

// Dir returns the partition's directory.
func (p *Partition) Dir() string { return p.dir }

// StartOffset returns the first retained offset: reads below it fail.
func (p *Partition) StartOffset() int64 {
	if p.cfg.ReadOnly {
		p.refresh()
	}
	return p.start.Load()
}

// EndOffset returns the next offset Append will assign (Kafka's log end
// offset). The partition holds [StartOffset, EndOffset); readers see
// [StartOffset, HighWatermark).
func (p *Partition) EndOffset() int64 {
	if p.cfg.ReadOnly {
		p.refresh()
	}
	return p.end.Load()
}

// HighWatermark returns the end of what readers see, as Kafka's high
// watermark bounds what consumers fetch: every read path (Reader,
// ReadBatches, Records, Wait, OffsetForTimestamp) returns only records
// below it, so that a reader never acts on a record the partition does not
// admit to. Under SyncAlways it is the synced offset: a record becomes
// visible once it is durable, when its Append returns; except that it
// passes the markers of WriteDecidedMarker that follow it before they are
// durable. Under SyncNever and SyncEvery it is EndOffset: a record becomes
// visible once it is written to the OS. It only moves forward, except
// through Truncate.
func (p *Partition) HighWatermark() int64 {
	if p.cfg.ReadOnly {
		p.refresh()
		return p.end.Load()
	}
	if p.cfg.Sync.Mode == SyncModeAlways {
		return min(p.visible.Load(), p.end.Load())
	}
	return p.end.Load()
}

// SyncedOffset returns the offset below which every record is known to be
// on stable storage.
func (p *Partition) SyncedOffset() int64 { return p.synced.Load() }

// Config returns the partition's configuration with defaults filled in.
func (p *Partition) Config() Config { return p.cfg }

// MaxDecompressed returns the most one batch's records may decompress to
// when the partition's readers read them (a log.Decoder's Limit): 64 times
// the largest batch it takes (MaxBatchBytes), at least
// log.DefaultDecompressLimit and at most 1 GiB. More is log.ErrTooLarge.
func (p *Partition) MaxDecompressed() int { return p.cfg.maxDecompress() }

// SegmentInfo describes one segment.
type SegmentInfo struct {
	Base         int64 // base offset (the file name)
	Next         int64 // offset after its last batch
	Bytes        int64 // size of the .log file
	MaxTimestamp int64 // largest record timestamp (ms), -1 if empty
	Active       bool  // takes appends
}

// Segments describes the partition's segments, oldest first.
func (p *Partition) Segments() []SegmentInfo {
	if p.cfg.ReadOnly {
		p.refresh()
	}
	st := p.state.Load()
	out := make([]SegmentInfo, len(st.segs))
	for i, r := range st.segs {
		out[i] = SegmentInfo{
			Base:         r.seg.Base(),
			Next:         r.seg.NextOffset(),
			Bytes:        r.seg.Size(),
			MaxTimestamp: r.seg.MaxTimestamp(),
			Active:       i == len(st.segs)-1,
		}
	}
	return out
}

// Close stops the background flusher, seals and fsyncs the active segment
// (under SyncNever it writes it out to the OS without an fsync),
// checkpoints the recovery point past it, writes a producer state snapshot
// at the end offset (unless there is one, or the partition has had no
// producer and has no snapshot), and closes every segment (a
// segment a reader still holds closes when the reader lets go). A
// checkpoint that cannot be written is logged, not returned: what Close
// promises is synced, and an earlier recovery point only makes recovery
// after a crash start earlier. A partition that a failure closed to
// appends returns that failure: what it may have lost is not cleanly shut
// down. Later calls fail with ErrClosed; closing twice is a no-op.
func (p *Partition) Close() error {
	if p.cfg.ReadOnly {
		return p.closeFollow()
	}
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return nil
	}
	p.mu.closed = true
	p.done.Store(true)
	p.mu.Unlock()
	// A cleaning round in flight sees closed and discards its output; wait
	// for it, so nothing renames files after Close returns.
	p.cleanMu.Lock()
	defer p.cleanMu.Unlock()
	p.stopBackground()
	p.appended.broadcast()

	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	err := p.flushPendingSyncMuLocked()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil && p.mu.failed != nil {
		err = p.mu.failed
	}
	if err == nil {
		active := p.mu.active.seg
		if err = active.Seal(); err == nil {
			err = active.Sync()
		}
		if err == nil {
			p.publishSynced(p.end.Load())
			p.checkpoint.set(active.NextOffset())
			p.checkpointSyncMuLocked()
			p.closeSnapshotMuLocked()
		}
	}
	for _, r := range p.state.Load().segs {
		if rerr := r.release(); err == nil {
			err = rerr
		}
	}
	if err != nil {
		return fmt.Errorf("partition: closing %s: %w", p.name, err)
	}
	return nil
}

// checkOpen fails once the partition is closed.
func (p *Partition) checkOpen() error {
	if p.done.Load() {
		return fmt.Errorf("partition: %s: %w", p.name, ErrClosed)
	}
	return nil
}

// writableMuLocked fails with ErrClosed once the partition is closed, or once
// a failed fsync or roll closed it to appends (wrapping that failure too).
// The caller holds mu.
func (p *Partition) writableMuLocked() error {
	switch {
	case p.cfg.ReadOnly:
		return ErrReadOnly
	case p.mu.closed:
		return ErrClosed
	case p.mu.failed != nil:
		return fmt.Errorf("%w: %w", ErrClosed, p.mu.failed)
	}
	return nil
}

// signal wakes every goroutine waiting on it. Waiting allocates a channel
// only when somebody waits, and a broadcast with nobody waiting takes no
// lock: it reads one flag.
//
// A waiter calls wait before it looks at the state it waits on, and a
// broadcaster changes that state (with an atomic or under a lock) before it
// calls broadcast; since Go's synchronizing operations are sequentially
// consistent, either the broadcaster sees the waiter's flag and closes its
// channel, or the waiter's look comes after the change and sees it.
type signal struct {
	mu      sync.Mutex
	ch      chan struct{}
	waiting atomic.Bool // ch != nil; written under mu
}

// wait returns a channel that is closed at the next broadcast.
func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
		s.waiting.Store(true)
	}
	return s.ch
}

// broadcast wakes every waiter.
func (s *signal) broadcast() {
	if !s.waiting.Load() {
		return
	}
	s.mu.Lock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
		s.waiting.Store(false)
	}
	s.mu.Unlock()
}
