package log

import (
	"encoding/binary"
	"fmt"
)

// ControlType is the type of a control record, the int16 after the
// version in its key (Kafka's ControlRecordType).
type ControlType int16

// The control record types. A transaction ends with one marker batch per
// partition it wrote: ControlCommit or ControlAbort, from the batch's
// producer id. The others are KRaft's and never appear in a topic's data.
const (
	ControlAbort          ControlType = 0
	ControlCommit         ControlType = 1
	ControlLeaderChange   ControlType = 2
	ControlSnapshotHeader ControlType = 3
	ControlSnapshotFooter ControlType = 4
	ControlKRaftVersion   ControlType = 5
	ControlKRaftVoters    ControlType = 6
)

// String returns Kafka's name for t.
func (t ControlType) String() string {
	switch t {
	case ControlAbort:
		return "ABORT"
	case ControlCommit:
		return "COMMIT"
	case ControlLeaderChange:
		return "LEADER_CHANGE"
	case ControlSnapshotHeader:
		return "SNAPSHOT_HEADER"
	case ControlSnapshotFooter:
		return "SNAPSHOT_FOOTER"
	case ControlKRaftVersion:
		return "KRAFT_VERSION"
	case ControlKRaftVoters:
		return "KRAFT_VOTERS"
	}
	return fmt.Sprintf("ControlType(%d)", int16(t))
}

// ParseControlKey returns the type in the key of a control record (a
// record of a batch whose header IsControl): int16 version, int16 type.
// As in Kafka, a key shorter than 4 bytes or with a negative version fails
// (here with ErrCorrupt), a later version is read as version 0, and an
// unknown type is returned as it is, for the caller to refuse or skip.
//
// With the batch's producer id it is what a transactional reader needs:
// the records a producer wrote since its previous marker are committed or
// aborted by its next one (Kafka's read_committed, and the aborted ranges
// Kafka keeps in .txnindex, come from this scan).
func ParseControlKey(key []byte) (ControlType, error) {
	if len(key) < 4 {
		return 0, errorf(ErrCorrupt, "control record key of %d bytes, want 4", len(key))
	}
	if v := int16(binary.BigEndian.Uint16(key)); v < 0 {
		return 0, errorf(ErrCorrupt, "control record key version %d, want 0 or more", v)
	}
	return ControlType(int16(binary.BigEndian.Uint16(key[2:]))), nil
}
