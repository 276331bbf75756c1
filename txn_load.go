package strata

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/stratalog/strata/txn"
)

// ensureLoaded replays TransactionStateTopic if a clean Open deferred it
// (see initTxns): before the first call that needs the ids' states. A
// failure is returned to that call, and the next one tries again.
func (c *txnCoordinator) ensureLoaded() error {
	if c.loaded.Load() {
		return nil
	}
	c.loadMu.Lock()
	defer c.loadMu.Unlock()
	if c.deferred == nil {
		return nil
	}
	if c.isClosed() {
		return ErrClosed
	}
	if err := c.load(c.deferred, true); err != nil {
		c.mu.Lock()
		c.ids = map[string]*txnEntry{}
		c.mu.Unlock()
		return err
	}
	c.deferred = nil
	c.loaded.Store(true)
	return nil
}

// shutdown ends the coordinator's work, for Close, before the store is
// closed: it waits for the calls under way, aborts every transaction still
// open (its calls return ErrClosed from then on) and finishes those a
// failure left decided but unfinished, so that a clean Open finds nothing
// to finish and can leave TransactionStateTopic unread until it is needed.
// Then BeginTxn returns ErrClosed. An error (a marker or state record that
// could not be written) means the shutdown is not clean: the next Open
// must read the topic and finish what is left.
func (c *txnCoordinator) shutdown() error {
	c.loadMu.Lock()
	defer c.loadMu.Unlock()
	c.mu.Lock()
	c.closed = true
	entries := slices.Collect(maps.Values(c.ids))
	c.mu.Unlock()
	slices.SortFunc(entries, func(a, b *txnEntry) int { return strings.Compare(a.id, b.id) })
	var errs []error
	for _, e := range entries {
		_ = e.lock(context.Background())
		if err := c.endLocked(e); err != nil {
			errs = append(errs, fmt.Errorf("strata: ending transaction %q at Close: %w", e.id, err))
		}
		e.unlock()
	}
	return errors.Join(errs...)
}

// endLocked aborts the id's open transaction, if any, and finishes a
// decided one, as BeginTxn would before the id's next transaction. The
// caller holds e's sem.
func (c *txnCoordinator) endLocked(e *txnEntry) error {
	if e.gone {
		return nil
	}
	if t := e.live; t != nil {
		if err := c.abortLocked(e, t, fmt.Errorf("strata: transaction %q aborted: the store was closed: %w", e.id, ErrClosed)); err != nil {
			return err
		}
	}
	switch e.meta.State {
	case txn.PrepareCommit, txn.PrepareAbort:
		return c.finishLocked(e)
	case txn.Ongoing:
		if e.meta.ProducerEpoch < math.MaxInt16-1 {
			e.meta.ProducerEpoch++
		}
		return c.completeLocked(e, false)
	}
	return nil
}
