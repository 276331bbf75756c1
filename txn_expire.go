package strata

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/stratalog/strata/txn"
)

// DefaultTransactionalIDExpiration is Options.TransactionalIDExpiration's
// default, Kafka's transactional.id.expiration.ms.
const DefaultTransactionalIDExpiration = 7 * 24 * time.Hour

// expireIDs forgets the transactional ids whose last transaction ended
// more than Options.TransactionalIDExpiration before now, and that have
// none open: each gets a tombstone in TransactionStateTopic (Kafka's Dead
// state), once the markers of its last transaction are durable (the
// tombstone takes away the record a crash would decide them by). An id
// busy now is left for the next pass. Ids whose states a clean Open left
// unread (see initTxns) wait until they are read.
func (c *txnCoordinator) expireIDs(now time.Time) error {
	exp := c.s.opts.TransactionalIDExpiration
	if exp < 0 || !c.loaded.Load() {
		return nil
	}
	c.mu.Lock()
	entries := slices.Collect(maps.Values(c.ids))
	c.mu.Unlock()
	var errs []error
	for _, e := range entries {
		select {
		case e.sem <- struct{}{}:
		default:
			continue
		}
		idle := e.live == nil && !e.gone && (e.meta.State == txn.Empty || e.meta.State == txn.CompleteCommit || e.meta.State == txn.CompleteAbort)
		if idle && now.Sub(e.meta.LastUpdate) > exp {
			errs = append(errs, c.expireLocked(e))
		}
		e.unlock()
	}
	return errors.Join(errs...)
}

// expireLocked forgets the id of e. The caller holds e's sem.
func (c *txnCoordinator) expireLocked(e *txnEntry) error {
	if !e.meta.LastUpdate.IsZero() {
		// Its state was written: a tombstone takes it away.
		if err := c.syncMarkersLocked(e); err != nil {
			return err
		}
		p, err := c.logPartition()
		if err != nil {
			return err
		}
		if _, err := p.Append([]Record{{Key: txn.AppendKey(nil, e.id)}}); err != nil {
			return fmt.Errorf("strata: expiring transactional id %q: %w", e.id, err)
		}
	}
	e.gone = true
	c.mu.Lock()
	if c.ids[e.id] == e {
		delete(c.ids, e.id)
	}
	c.mu.Unlock()
	return nil
}
