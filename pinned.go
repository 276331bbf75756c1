package strata

import (
	"github.com/stratalog/strata/partition"
)

// PinnedBatches are stored batches that View.PinBatches returns without a
// copy: Bytes alias the store's memory mapping of the segment they come
// from, which stays mapped, and its files on disk, until Release, even if
// retention, compaction, DeleteRecords, DeleteTopic or Store.Close drops or
// closes the segment meanwhile. The offsets are the partition's, read
// after the batches, so never behind them.
type PinnedBatches struct {
	// Bytes are whole batches, Kafka's RecordBatches back to back as they
	// are on disk, what ReadBatches would return: read-only (writing
	// through them is a crash), valid until Release.
	Bytes []byte
	// StartOffset is the partition's first retained offset (Kafka's log
	// start offset).
	StartOffset int64
	// HighWatermark is the end of what read_uncommitted readers see.
	HighWatermark int64
	// LastStableOffset is the end of what read_committed readers see: the
	// first offset of the earliest transaction still open, at most the
	// high watermark.
	LastStableOffset int64

	pin *partition.Pin
}

// Release lets the segment go: a segment dropped meanwhile is closed and
// removed once its last reader has released it. Until then its disk space
// stays in use, so release as soon as the bytes are written out. Releasing
// again, or releasing PinnedBatches without bytes, does nothing.
func (b PinnedBatches) Release() { b.pin.Release() }

// PinBatches is ReadBatches without the copy: the same batches, from the
// one that holds offset, up to about maxBytes (at least one batch when any
// is visible), from one segment, with the partition's offsets. The caller
// must call Release once done with the bytes, as a Kafka Fetch response
// that sends them straight from the mapping does after writing them. An
// offset outside the partition's [start, end] is ErrOffsetOutOfRange, an
// unknown topic or partition ErrUnknownTopic or ErrUnknownPartition; an
// error pins nothing. PinBatches does not block.
func (v View) PinBatches(topicName string, part int, offset int64, maxBytes int) (_ PinnedBatches, err error) {
	defer wrapErr(&err)
	if err := checkIsolation(v.iso); err != nil {
		return PinnedBatches{}, err
	}
	p, err := v.s.partition(topicName, part)
	if err != nil {
		return PinnedBatches{}, err
	}
	iso := v.s.isolation(v.iso)
	end := readEnd(p, iso) // before the read: never more than it saw
	batches, pin, err := p.ViewBatches(offset, maxBytes)
	if err != nil {
		return PinnedBatches{}, err
	}
	if iso == ReadCommitted {
		_, cut := cutAt(batches, end)
		batches = batches[:len(batches)-cut]
	}
	if len(batches) == 0 {
		pin.Release()
		pin, batches = nil, nil
	}
	return PinnedBatches{
		Bytes:            batches,
		StartOffset:      p.StartOffset(),
		HighWatermark:    readEnd(p, ReadUncommitted),
		LastStableOffset: readEnd(p, ReadCommitted),
		pin:              pin,
	}, nil
}
