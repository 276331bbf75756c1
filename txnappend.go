package strata

import (
	"encoding/binary"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
)

// appendTxnBatch appends recs to p as one transactional batch of producer
// pid at epoch from sequence seq.
func appendTxnBatch(p *partition.Partition, recs []Record, pid int64, epoch int16, seq int32, now int64) (int64, error) {
	h := log.BatchHeader{
		PartitionLeaderEpoch: -1,
		Attributes:           log.AttrTransactional,
		LastOffsetDelta:      int32(len(recs) - 1),
		ProducerID:           pid,
		ProducerEpoch:        epoch,
		BaseSequence:         seq,
	}
	rs := make([]log.Record, len(recs))
	for i, r := range recs {
		rs[i] = r
		rs[i].Offset = int64(i)
		if r.Timestamp.IsZero() {
			rs[i].Timestamp = time.UnixMilli(now)
		}
		h.BaseTimestamp = rs[0].Timestamp.UnixMilli()
		h.MaxTimestamp = max(h.MaxTimestamp, rs[i].Timestamp.UnixMilli())
	}
	b, err := log.EncodeBatchWithHeader(nil, h, rs)
	if err != nil {
		return 0, err
	}
	return p.AppendRawBatch(b)
}

// writeMarker appends producer pid's COMMIT or ABORT marker to p.
func writeMarker(p *partition.Partition, pid int64, epoch int16, commit bool, now int64) (int64, error) {
	typ := log.ControlAbort
	if commit {
		typ = log.ControlCommit
	}
	key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(typ))
	value := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), 0)
	h := log.BatchHeader{
		PartitionLeaderEpoch: -1,
		Attributes:           log.AttrTransactional | log.AttrControl,
		BaseTimestamp:        now,
		MaxTimestamp:         now,
		ProducerID:           pid,
		ProducerEpoch:        epoch,
		BaseSequence:         -1,
	}
	b, err := log.EncodeBatchWithHeader(nil, h, []log.Record{{Timestamp: time.UnixMilli(now), Key: key, Value: value}})
	if err != nil {
		return 0, err
	}
	return p.AppendRawBatch(b)
}
