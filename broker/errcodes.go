package broker

import (
	"errors"

	"github.com/stratalog/strata"
)

// Kafka's error codes the broker answers with (Kafka's
// clients/.../common/protocol/Errors.java).
const (
	errNone                               int16 = 0
	errOffsetOutOfRange                   int16 = 1
	errCorruptMessage                     int16 = 2
	errUnknownTopicOrPartition            int16 = 3
	errMessageTooLarge                    int16 = 10
	errOffsetMetadataTooLarge             int16 = 12
	errCoordinatorNotAvailable            int16 = 15
	errInvalidTopic                       int16 = 17
	errInvalidRequiredAcks                int16 = 21
	errIllegalGeneration                  int16 = 22
	errInconsistentGroupProtocol          int16 = 23
	errInvalidGroupID                     int16 = 24
	errUnknownMemberID                    int16 = 25
	errInvalidSessionTimeout              int16 = 26
	errRebalanceInProgress                int16 = 27
	errInvalidTimestamp                   int16 = 32
	errUnsupportedSaslMechanism           int16 = 33
	errIllegalSaslState                   int16 = 34
	errUnsupportedVersion                 int16 = 35
	errTopicAlreadyExists                 int16 = 36
	errInvalidPartitions                  int16 = 37
	errInvalidReplicationFactor           int16 = 38
	errInvalidReplicaAssignment           int16 = 39
	errInvalidConfig                      int16 = 40
	errInvalidRequest                     int16 = 42
	errUnsupportedMessageFormat           int16 = 43
	errOutOfOrderSequence                 int16 = 45
	errInvalidProducerEpoch               int16 = 47
	errInvalidTxnState                    int16 = 48
	errInvalidProducerIDMapping           int16 = 49
	errInvalidTransactionTimeout          int16 = 50
	errConcurrentTransactions             int16 = 51
	errTransactionalIDAuthorizationFailed int16 = 53
	errOperationNotAttempted              int16 = 55
	errKafkaStorage                       int16 = 56
	errSaslAuthenticationFailed           int16 = 58
	errNonEmptyGroup                      int16 = 68
	errGroupIDNotFound                    int16 = 69
	errFetchSessionIDNotFound             int16 = 70
	errInvalidFetchSessionEpoch           int16 = 71
	errUnsupportedCompression             int16 = 76
	errMemberIDRequired                   int16 = 79
	errGroupMaxSizeReached                int16 = 81
	errFencedInstanceID                   int16 = 82
	errGroupSubscribedToTopic             int16 = 86
	errInvalidRecord                      int16 = 87
	errUnstableOffsetCommit               int16 = 88
	errProducerFenced                     int16 = 90
	errUnknownTopicID                     int16 = 100
	errTransactionalIDNotFound            int16 = 105
	errFencedMemberEpoch                  int16 = 110
	errUnreleasedInstanceID               int16 = 111
	errUnsupportedAssignor                int16 = 112
	errStaleMemberEpoch                   int16 = 113
	errInvalidRegularExpression           int16 = 128
)

// codeOf returns Kafka's error code for an error of the Store.
func codeOf(err error) int16 {
	switch {
	case err == nil:
		return errNone
	case errors.Is(err, strata.ErrUnknownTopic), errors.Is(err, strata.ErrUnknownPartition):
		return errUnknownTopicOrPartition
	case errors.Is(err, strata.ErrInvalidTopic), errors.Is(err, strata.ErrReservedTopic):
		return errInvalidTopic
	case errors.Is(err, strata.ErrOffsetOutOfRange):
		return errOffsetOutOfRange
	case errors.Is(err, strata.ErrBatchTooLarge), errors.Is(err, strata.ErrDecompressedTooLarge):
		return errMessageTooLarge
	case errors.Is(err, strata.ErrUnsupportedFormat):
		return errUnsupportedMessageFormat
	case errors.Is(err, strata.ErrUnsupportedCompression):
		return errUnsupportedCompression
	case errors.Is(err, strata.ErrTimestampTooFarAhead):
		return errInvalidTimestamp
	case errors.Is(err, strata.ErrOutOfOrderSequence):
		return errOutOfOrderSequence
	case errors.Is(err, strata.ErrProducerFenced):
		return errInvalidProducerEpoch
	case errors.Is(err, strata.ErrInvalidTxnState):
		return errInvalidTxnState
	case errors.Is(err, strata.ErrNoKey), errors.Is(err, strata.ErrInvalidProducer):
		return errInvalidRecord
	case errors.Is(err, strata.ErrCorrupt), errors.Is(err, strata.ErrNoRecords):
		return errCorruptMessage
	case errors.Is(err, strata.ErrTopicExists):
		return errTopicAlreadyExists
	}
	return errKafkaStorage
}
