package group

import "errors"

// Errors returned by the [Coordinator] and the record codec. Match them
// with errors.Is; the messages name the group, member and partition.
var (
	// ErrBadRecord means a __consumer_offsets key or value, or consumer
	// protocol bytes, are malformed: truncated, with a negative or
	// overlong length, an unknown value version, or trailing bytes.
	ErrBadRecord = errors.New("group: malformed __consumer_offsets record")
	// ErrNotOffsetCommit means a __consumer_offsets key is well formed but
	// holds another kind of record (Kafka's group metadata, key version 2,
	// or the records of KIP-848, versions 3 and up). A reader replaying
	// records written by Kafka skips them.
	ErrNotOffsetCommit = errors.New("group: record is not an offset commit")
	// ErrNotGroupMetadata means a __consumer_offsets key is well formed but
	// holds another kind of record than group metadata (key version 2): an
	// offset commit, or a record of KIP-848.
	ErrNotGroupMetadata = errors.New("group: record is not group metadata")
	// ErrUnknownGroup means a group has no members, committed offsets or
	// metadata: as far as the store knows, it does not exist.
	ErrUnknownGroup = errors.New("group: unknown group")
	// ErrInvalidGroup means a group id is empty or longer than 32767 bytes
	// (the record format stores it with an int16 length).
	ErrInvalidGroup = errors.New("group: invalid group id")
	// ErrUnknownMember means a member id was never issued by the group.
	ErrUnknownMember = errors.New("group: unknown member")
	// ErrFenced means the member was a member of the group but no longer
	// is (it left, or was evicted after its session timed out or it did
	// not revoke in time), or that it used a generation older than the
	// one its last Sync returned. A fenced consumer must drop its
	// partitions without committing and join again.
	ErrFenced = errors.New("group: member fenced")
	// ErrNotOwner means a member committed, or revoked, a partition it
	// does not own.
	ErrNotOwner = errors.New("group: partition not owned by member")
	// ErrGroupActive means the operation needs a group without members: a
	// simple commit (no member id), or deleting offsets of topics that
	// members subscribe to.
	ErrGroupActive = errors.New("group: group has active members")
	// ErrGroupClaimed means the group is claimed (Coordinator.Claim) by
	// members the Coordinator does not manage (Kafka clients of a classic
	// group served over the wire): it takes no members of its own, and
	// its offsets are not deleted as a whole, until they are gone.
	ErrGroupClaimed = errors.New("group: group claimed by members outside the coordinator")
	// ErrMetadataTooLarge means a commit's metadata is longer than
	// Options.MetadataMaxBytes (Kafka's offset.metadata.max.bytes).
	ErrMetadataTooLarge = errors.New("group: offset metadata too large")
	// ErrInvalidOffset means a committed offset is negative.
	ErrInvalidOffset = errors.New("group: invalid offset")
	// ErrUnknownPartition means a commit names a topic that does not exist
	// or a partition outside its range, according to Options.Partitions,
	// or a topic name too long for the record format.
	ErrUnknownPartition = errors.New("group: unknown topic or partition")
	// ErrNoOffset means a consumer has no valid position for a partition:
	// it has no committed offset, or the committed offset is out of range,
	// and its reset policy is [ResetNone].
	ErrNoOffset = errors.New("group: no valid offset and reset policy is none")
	// ErrInvalidProducer means a transactional commit names a negative
	// producer id or epoch.
	ErrInvalidProducer = errors.New("group: invalid producer id or epoch")
	// ErrTxnUnsupported means a transactional commit or end was asked of a
	// Coordinator whose OffsetLog is not a TxnOffsetLog.
	ErrTxnUnsupported = errors.New("group: offset log does not take transactional commits")
)
