package partition

import (
	"fmt"

	"github.com/stratalog/strata/log"
)

// marker is a transaction marker as its control record holds it (Kafka's
// EndTransactionMarker,
// clients/src/main/java/org/apache/kafka/common/record/EndTransactionMarker.java):
// key version 0 and the type, value version 0 and the coordinator epoch.
type marker struct {
	commit           bool
	coordinatorEpoch int32
}

// encodeMarker returns the control batch of a marker of producer pid at
// epoch, stamped ts (ms), at base offset 0.
func encodeMarker(pid int64, epoch int16, m marker, ts int64) ([]byte, error) {
	typ := log.ControlAbort
	if m.commit {
		typ = log.ControlCommit
	}
	return log.EncodeControlBatch(nil, typ, log.MarkerOptions{Now: ts, ProducerID: pid, ProducerEpoch: epoch, CoordinatorEpoch: m.coordinatorEpoch})
}

// parseMarker reads the marker in control batch b (header h). ok is false
// for a control batch without records, which compaction leaves once a
// transaction's records are all gone, and which ends nothing. A record that
// is not a COMMIT or ABORT marker is ErrInvalidProducer.
func parseMarker(b []byte, h log.BatchHeader) (m marker, ok bool, err error) {
	typ, epoch, ok, err := log.ParseControlBatch(nil, b, h)
	switch {
	case err != nil:
		return marker{}, false, fmt.Errorf("reading the control batch at %d: %w: %w", h.BaseOffset, ErrInvalidProducer, err)
	case !ok:
		return marker{}, false, nil
	case typ != log.ControlCommit && typ != log.ControlAbort:
		return marker{}, false, fmt.Errorf("control record at %d is %s, not a COMMIT or ABORT marker: %w", h.BaseOffset, typ, ErrInvalidProducer)
	}
	return marker{commit: typ == log.ControlCommit, coordinatorEpoch: epoch}, true, nil
}

// WriteMarker ends producer pid's transaction in the partition with a
// marker: a control batch holding a COMMIT (commit) or ABORT record, as
// Kafka's transaction coordinator writes it (key: version 0 and the type;
// value: version 0 and coordinatorEpoch), from the producer at epoch. It
// returns the marker's offset. Readers skip the marker; a read_committed
// reader reads the transaction's records once a COMMIT follows them, and
// never those an ABORT follows.
//
// A marker for a producer with no transaction open in the partition is
// written all the same (Kafka does) and ends nothing. An ABORT that ends a
// transaction is entered into the aborted-transaction index. An epoch older
// than the producer's current one is ErrProducerFenced, a coordinator
// epoch older than the producer's last marker's ErrCoordinatorFenced, a
// negative pid or epoch ErrInvalidProducer; none writes anything. Under
// SyncAlways WriteMarker returns once the marker is durable.
func (p *Partition) WriteMarker(pid int64, epoch int16, commit bool, coordinatorEpoch int32) (int64, error) {
	return p.writeMarker(pid, epoch, commit, coordinatorEpoch, false)
}

// WriteDecidedMarker is WriteMarker for a transaction whose outcome is
// recorded durably elsewhere, by a coordinator that writes the marker
// again after a crash that lost it (as the store's does from its
// PrepareCommit record). Under SyncAlways it returns without waiting for
// an fsync, and readers see the marker at once: the last stable offset
// passes the transaction (still at most the high watermark, so its
// records are visible to read_committed readers once they are durable),
// and the high watermark passes the marker if nothing undurable comes
// before it. The next fsync of the partition makes the marker durable.
// Until then a crash can lose it, and with it nothing but the marker
// (what follows it is lost too): the transaction is open again when the
// partition reopens, for the coordinator to end as it was decided. Under
// SyncEvery and SyncNever it is WriteMarker. The checks and errors are
// WriteMarker's.
func (p *Partition) WriteDecidedMarker(pid int64, epoch int16, commit bool, coordinatorEpoch int32) (int64, error) {
	return p.writeMarker(pid, epoch, commit, coordinatorEpoch, true)
}

// writeMarker is WriteMarker, or WriteDecidedMarker if decided.
func (p *Partition) writeMarker(pid int64, epoch int16, commit bool, coordinatorEpoch int32, decided bool) (int64, error) {
	if pid < 0 || epoch < 0 {
		return 0, fmt.Errorf("partition: marker to %s from producer %d at epoch %d: both must be at least 0: %w", p.name, pid, epoch, ErrInvalidProducer)
	}
	b, err := encodeMarker(pid, epoch, marker{commit: commit, coordinatorEpoch: coordinatorEpoch}, p.cfg.Now().UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("partition: marker to %s: %w", p.name, err)
	}
	h, _ := log.ReadHeader(b) // just encoded: cannot fail
	a, err := p.appendEncoded(b, &h, condition{end: anyEnd, decided: decided}, nil)
	return a.base, err
}
