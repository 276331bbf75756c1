package strata

import (
	"errors"
	"fmt"

	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
)

// appendTxnBatch appends recs to p as one transactional batch of producer
// pid at epoch from sequence seq, with p's compression, and returns its
// first offset. A retry of a batch p holds already (the same sequence)
// writes nothing and returns the first offset of the original.
func appendTxnBatch(p *partition.Partition, recs []Record, pid int64, epoch int16, seq int32) (int64, error) {
	cfg := p.Config()
	base, _, err := p.AppendProduced(recs, partition.ProducerBatch{ID: pid, Epoch: epoch, Seq: seq, Transactional: true}, cfg.Compression, cfg.CompressionLevel)
	return base, err
}

// markerCoordinatorEpoch is the coordinator epoch of the markers the store
// writes to __consumer_offsets: it has a single transaction coordinator,
// which never moves.
const markerCoordinatorEpoch = 0

// writeMarker appends producer pid's COMMIT or ABORT marker, at epoch, to
// p.
func writeMarker(p *partition.Partition, pid int64, epoch int16, commit bool) (int64, error) {
	return p.WriteMarker(pid, epoch, commit, markerCoordinatorEpoch)
}

// goneErr returns err, the error of a write to partition part of topic t,
// or, when it says the partition is closed while the store is open and t
// is no longer the store's topic of its name (DeleteTopic took it), an
// error that matches ErrUnknownTopic in its place.
func (s *Store) goneErr(t *topic.Topic, part int, err error) error {
	if !errors.Is(err, ErrClosed) || s.closed.Load() {
		return err
	}
	if cur, lerr := s.lookupTopic(t.Name()); lerr == nil && cur == t {
		return err
	}
	return fmt.Errorf("strata: topic %q was deleted while the transaction wrote to its partition %d: %w", t.Name(), part, ErrUnknownTopic)
}
