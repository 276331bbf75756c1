package partition

import (
	"errors"
	"fmt"
)

// ErrPendingTransaction means AppendIfLast found the last record of its
// key at or past the first offset of a transaction still open in the
// partition, and wrote nothing: a read_committed reader cannot see that
// record yet (it stops at the last stable offset), and a record of the
// transaction itself may still be aborted, so no expected offset the
// caller could give is one it decided on. Retry once the transaction has
// ended (committed, aborted or timed out), after loading the key again.
// It does not match ErrWrongOffset.
var ErrPendingTransaction = errors.New("partition: the key's last record lies in or after a transaction still open; retry once it ends")

// pendingMuLocked refuses, with ErrPendingTransaction, an AppendIfLast of
// key whose last record is at offset last, at or past the first offset of
// a transaction open in the partition: a record of that transaction, or
// one appended after its first record, which read_committed readers do not
// see until it ends. A transaction whose marker is written (even one
// readers do not see yet) is not open: its records are decided. The
// caller holds mu.
func (p *Partition) pendingMuLocked(key []byte, last int64) error {
	if last == NoOffset {
		return nil
	}
	for _, t := range p.mu.producers.txns {
		if t.first > last {
			break // by first offset
		}
		if t.last < 0 {
			return fmt.Errorf("partition: append to %s: the last record of key %q, at offset %d, is at or past offset %d, where a transaction of producer %d begins: %w",
				p.name, key, last, t.first, t.pid, ErrPendingTransaction)
		}
	}
	return nil
}
