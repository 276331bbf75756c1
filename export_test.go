package strata

import "github.com/stratalog/strata/group"

// EncodedAhead returns how many batches Produce calls waiting for room
// have encoded for the sender.
func (p *Producer) EncodedAhead() int64 { return p.encodedAhead.Load() }

// StoreErr is storeErr, for the test of the message rewriting.
func StoreErr(err error) error { return storeErr(err) }

// CommitTxnOffsets is s.commitTxnOffsets, without a member ref. These are
// functions, not methods, so that TestClosedStore's table of the Store's
// methods stays the API's.
func CommitTxnOffsets(s *Store, groupName string, pid int64, epoch int16, offsets map[TopicPartition]OffsetAndMetadata) error {
	return storeErr(s.commitTxnOffsets(groupName, group.MemberRef{}, pid, epoch, offsets))
}

// EndTxnOffsets is s.endTxnOffsets.
func EndTxnOffsets(s *Store, pid int64, epoch int16, commit bool) error {
	_, err := s.endTxnOffsets(pid, epoch, commit)
	return storeErr(err)
}

// AppendTxnBatch appends recs to a partition as one transactional batch of
// producer pid at epoch from sequence seq, stamped with the store's clock.
func AppendTxnBatch(s *Store, topicName string, part int, pid int64, epoch int16, seq int32, recs []Record) (int64, error) {
	p, err := s.partition(topicName, part)
	if err != nil {
		return 0, err
	}
	return appendTxnBatch(p, recs, pid, epoch, seq)
}

// WriteMarker appends producer pid's COMMIT or ABORT marker to a
// partition.
func WriteMarker(s *Store, topicName string, part int, pid int64, epoch int16, commit bool) (int64, error) {
	p, err := s.partition(topicName, part)
	if err != nil {
		return 0, err
	}
	return writeMarker(p, pid, epoch, commit)
}

// OpenedClean reports whether Open found the clean-shutdown marker. A
// function, not a method, for TestClosedStore's table.
func OpenedClean(s *Store) bool { return s.clean }
