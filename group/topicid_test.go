package group

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A topic id of the golden record: bytes 0x01 … 0x10.
var goldenID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// TestRecordWithTopicID: a commit with a topic id is written as Kafka 4.1
// writes one, value version 4 with the id in tagged field 0, and read back.
func TestRecordWithTopicID(t *testing.T) {
	c := goldenCommit
	c.TopicID = goldenID
	_, value := EncodeCommit(c)
	require.Equal(t, unhex("0004 000000000000002a ffffffff 02 6d 0000018bcfe56800 01 00 10 0102030405060708090a0b0c0d0e0f10"), value)
	got, err := DecodeCommit(goldenKey, value)
	require.NoError(t, err)
	require.Equal(t, c, got)

	// A later Kafka's other tagged fields are skipped; a topic id of the
	// wrong size is malformed.
	withOther := unhex("0004 000000000000002a ffffffff 02 6d 0000018bcfe56800 02 00 10 0102030405060708090a0b0c0d0e0f10 05 01 ff")
	got, err = DecodeCommit(goldenKey, withOther)
	require.NoError(t, err)
	require.Equal(t, c, got)
	_, err = DecodeCommit(goldenKey, unhex("0004 000000000000002a ffffffff 02 6d 0000018bcfe56800 01 00 02 0102"))
	require.ErrorIs(t, err, ErrBadRecord)
}

// topicIDs is a mutable topic-id table for Options.TopicID.
type topicIDs map[string][16]byte

// TestCommittedOfAnEarlierTopic: an offset committed for an earlier topic of
// the name is not returned, and DeleteStaleOffsets deletes it, and the
// offsets of topics and partitions that do not exist.
func TestCommittedOfAnEarlierTopic(t *testing.T) {
	ids := topicIDs{"t": {1}, "u": {2}}
	counts := newTopics(map[string]int{"t": 2, "u": 1})
	log := &memLog{}
	c := NewCoordinator(log, &Options{Now: func() time.Time { return epoch }, Partitions: counts.Partitions,
		TopicID: func(topic string) [16]byte { return ids[topic] }})
	require.NoError(t, c.Commit("g", MemberRef{}, map[TopicPartition]OffsetAndMetadata{tp("t", 0): om(5), tp("t", 1): om(6), tp("u", 0): om(7)}))
	got, ok := c.Committed("g", "t", 0)
	require.True(t, ok)
	require.Equal(t, [16]byte{1}, got.TopicID, "Commit stamps the topic's id")
	require.Equal(t, [16]byte{1}, log.commits()[0].TopicID, "and the log gets it")

	ids["t"] = [16]byte{3} // t deleted and created again
	_, ok = c.Committed("g", "t", 0)
	require.False(t, ok, "the old topic's offset is not the new one's")
	require.NotContains(t, c.Offsets("g"), tp("t", 1))
	require.Contains(t, c.Offsets("g"), tp("u", 0))

	// A replayed commit without an id (an older store) is taken for the
	// topic of its name.
	c.Replay(Commit{Group: "h", Topic: "u", Partition: 0, Offset: 9, CommitTime: epoch})
	got, ok = c.Committed("h", "u", 0)
	require.True(t, ok)
	require.Equal(t, int64(9), got.Offset)
	c.Replay(Commit{Group: "h", Topic: "gone", Partition: 0, Offset: 1, CommitTime: epoch},
		Commit{Group: "h", Topic: "u", Partition: 4, Offset: 1, CommitTime: epoch})

	n, err := c.DeleteStaleOffsets()
	require.NoError(t, err)
	require.Equal(t, 4, n, "t-0 and t-1 of the old t, a topic that is gone, a partition past the count")
	require.Equal(t, map[TopicPartition]OffsetAndMetadata{tp("u", 0): {Offset: 7, CommitTime: epoch, TopicID: [16]byte{2}}}, c.Offsets("g"))
	require.Equal(t, map[TopicPartition]OffsetAndMetadata{tp("u", 0): at(9)}, c.Offsets("h"))
	var tombstones int
	for _, cm := range log.commits() {
		if cm.Deleted {
			tombstones++
		}
	}
	require.Equal(t, 4, tombstones, "each deletion is a tombstone in the log")
}
