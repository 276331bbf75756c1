package partition

// AbortedTxn is a transaction that an ABORT marker ended, as the
// aborted-transaction index (.txnindex) records it.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64 // the transaction's first offset in the partition
	LastOffset       int64 // the ABORT marker's offset
	LastStableOffset int64 // the last stable offset when the marker was written
}

// addAbortedMuLocked enters an aborted transaction into the index once its
// marker is appended. Until the index exists it does nothing. The caller
// holds mu.
func (p *Partition) addAbortedMuLocked(AbortedTxn) error { return nil }
