package group

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The golden group metadata record, computed by hand from Kafka's layout
// (GroupMetadataKey v2, GroupMetadataValue v3): group "g" of one consumer
// "g-1" subscribed to "t" and assigned t-0, generation 1, protocol range,
// at 1700000000000 ms.
var (
	goldenMetaKey   = unhex("0002 0001 67")
	goldenSub       = unhex("0001 00000001 0001 74 ffffffff 00000000")
	goldenAsg       = unhex("0001 00000001 0001 74 00000001 00000000 ffffffff")
	goldenMetaValue = unhex("0003" +
		" 0008 636f6e73756d6572" + // protocol type "consumer"
		" 00000001" + // generation
		" 0005 72616e6765" + // protocol "range"
		" 0003 672d31" + // leader "g-1"
		" 0000018bcfe56800" + // current state timestamp
		" 00000001" + // one member
		" 0003 672d31" + // member id
		" ffff" + // group instance id null
		" 0006 737472617461" + // client id "strata"
		" 0009 6c6f63616c686f7374" + // client host "localhost"
		" 000493e0" + // rebalance timeout 300000 ms
		" 0000afc8" + // session timeout 45000 ms
		" 00000011 0001 00000001 0001 74 ffffffff 00000000" + // subscription
		" 00000015 0001 00000001 0001 74 00000001 00000000 ffffffff") // assignment
	goldenMeta = &GroupMetadata{
		ProtocolType: ConsumerProtocolType, Generation: 1, Protocol: "range", Leader: "g-1",
		StateTime: time.UnixMilli(1_700_000_000_000).UTC(),
		Members: []MemberMetadata{{
			MemberID: "g-1", ClientID: "strata", ClientHost: "localhost",
			RebalanceTimeout: 5 * time.Minute, SessionTimeout: 45 * time.Second,
			Subscription: goldenSub, Assignment: goldenAsg,
		}},
	}
)

func TestGroupMetadataGolden(t *testing.T) {
	require.Equal(t, goldenSub, AppendSubscription(nil, []string{"t"}, nil))
	require.Equal(t, goldenAsg, AppendAssignment(nil, []TopicPartition{{Topic: "t", Partition: 0}}))
	key, value := EncodeGroupMetadata("g", goldenMeta)
	require.Equal(t, goldenMetaKey, key)
	require.Equal(t, goldenMetaValue, value)

	group, md, err := DecodeGroupMetadata(key, value)
	require.NoError(t, err)
	require.Equal(t, "g", group)
	require.Equal(t, goldenMeta, md)

	// The loader of offset commits skips the record, and this decoder
	// skips an offset commit.
	_, err = DecodeCommit(key, value)
	require.ErrorIs(t, err, ErrNotOffsetCommit)
	_, _, err = DecodeGroupMetadata(goldenKey, goldenValue)
	require.ErrorIs(t, err, ErrNotGroupMetadata)
}

func TestGroupMetadataRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		md   *GroupMetadata
	}{
		{"golden", goldenMeta},
		{"empty group", &GroupMetadata{ProtocolType: ConsumerProtocolType, Generation: 7}},
		{"static members", &GroupMetadata{ProtocolType: "consumer", Generation: 1 << 30, Protocol: "cooperative-sticky", Leader: "b",
			Members: []MemberMetadata{
				{MemberID: "a", InstanceID: "i-1", ClientID: "c", ClientHost: "/10.0.0.1", SessionTimeout: time.Second, Subscription: []byte{}, Assignment: []byte{1, 2}},
				{MemberID: "b", ClientID: "", ClientHost: "", Subscription: []byte{9}, Assignment: []byte{}},
			}}},
		{"long strings", &GroupMetadata{ProtocolType: strings.Repeat("p", maxStringLen), Leader: strings.Repeat("l", maxStringLen)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, value := EncodeGroupMetadata("grp", tt.md)
			group, md, err := DecodeGroupMetadata(key, value)
			require.NoError(t, err)
			require.Equal(t, "grp", group)
			require.Equal(t, tt.md, md)
		})
	}
	key, value := EncodeGroupMetadata("grp", nil)
	require.Nil(t, value)
	group, md, err := DecodeGroupMetadata(key, value)
	require.NoError(t, err)
	require.Equal(t, "grp", group)
	require.Nil(t, md)
}

// TestGroupMetadataVersions reads the value versions Kafka wrote before 3,
// and the flexible version 4, built by hand.
func TestGroupMetadataVersions(t *testing.T) {
	member := MemberMetadata{MemberID: "m", ClientID: "c", ClientHost: "h", SessionTimeout: 10 * time.Millisecond,
		Subscription: []byte{0xaa}, Assignment: []byte{0xbb}}
	tests := []struct {
		name  string
		value string
		want  *GroupMetadata
	}{
		{"v0", "0000 0001 78 00000002 0001 70 ffff 00000001 0001 6d 0001 63 0001 68 0000000a 00000001 aa 00000001 bb",
			&GroupMetadata{ProtocolType: "x", Generation: 2, Protocol: "p", Members: []MemberMetadata{member}}},
		{"v1 rebalance timeout", "0001 0001 78 00000002 0001 70 0001 6d 00000001 0001 6d 0001 63 0001 68 00000014 0000000a 00000001 aa 00000001 bb",
			&GroupMetadata{ProtocolType: "x", Generation: 2, Protocol: "p", Leader: "m",
				Members: []MemberMetadata{withRebalance(member, 20*time.Millisecond)}}},
		{"v2 no state timestamp", "0002 0001 78 00000002 ffff ffff ffffffffffffffff 00000000",
			&GroupMetadata{ProtocolType: "x", Generation: 2}},
		{"v4 flexible", "0004 02 78 00000002 02 70 00 0000018bcfe56800 02 02 6d 03 6931 02 63 02 68 00000014 0000000a 02 aa 02 bb 00" +
			" 01 05 01 ff", // a tagged field of a later Kafka, skipped
			&GroupMetadata{ProtocolType: "x", Generation: 2, Protocol: "p", StateTime: time.UnixMilli(1_700_000_000_000).UTC(),
				Members: []MemberMetadata{withInstance(withRebalance(member, 20*time.Millisecond), "i1")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, md, err := DecodeGroupMetadata(goldenMetaKey, unhex(tt.value))
			require.NoError(t, err)
			require.Equal(t, tt.want, md)
		})
	}
}

func withRebalance(m MemberMetadata, d time.Duration) MemberMetadata {
	m.RebalanceTimeout = d
	return m
}
func withInstance(m MemberMetadata, id string) MemberMetadata { m.InstanceID = id; return m }

// TestGroupMetadataMalformed: every truncation of a valid record, and
// other damage, is ErrBadRecord, never a panic.
func TestGroupMetadataMalformed(t *testing.T) {
	for n := range len(goldenMetaValue) {
		_, _, err := DecodeGroupMetadata(goldenMetaKey, goldenMetaValue[:n])
		require.ErrorIs(t, err, ErrBadRecord, "value cut to %d bytes", n)
	}
	for n := range len(goldenMetaKey) {
		_, _, err := DecodeGroupMetadata(goldenMetaKey[:n], goldenMetaValue)
		require.ErrorIs(t, err, ErrBadRecord, "key cut to %d bytes", n)
	}
	for _, v := range []string{
		"0005 0001 78 00000002 ffff ffff ffffffffffffffff 00000000",    // unknown version
		"0003 0001 78 00000002 ffff ffff ffffffffffffffff ffffffff",    // null members
		"0003 0001 78 00000002 ffff ffff ffffffffffffffff 7fffffff",    // members beyond the bytes
		"0003 0001 78 00000002 ffff ffff ffffffffffffffff 00000000 00", // trailing byte
	} {
		_, _, err := DecodeGroupMetadata(goldenMetaKey, unhex(v))
		require.ErrorIs(t, err, ErrBadRecord, v)
	}
}

func TestConsumerProtocol(t *testing.T) {
	parts := []TopicPartition{{Topic: "a", Partition: 2}, {Topic: "a", Partition: 0}, {Topic: "b", Partition: 1}}
	sub, err := DecodeSubscription(AppendSubscription(nil, []string{"a", "b"}, parts))
	require.NoError(t, err)
	require.Equal(t, Subscription{Topics: []string{"a", "b"}, Owned: parts, Generation: -1}, sub)

	got, userData, err := DecodeAssignment(AppendAssignment(nil, parts))
	require.NoError(t, err)
	require.Equal(t, parts, got)
	require.Nil(t, userData)

	// Versions 0 and 3, as Kafka's clients write them: v3 with a
	// generation and a rack; a later version's extra bytes are ignored.
	sub, err = DecodeSubscription(unhex("0000 00000001 0001 61 00000002 0102"))
	require.NoError(t, err)
	require.Equal(t, Subscription{Topics: []string{"a"}, UserData: []byte{1, 2}, Generation: -1}, sub)
	sub, err = DecodeSubscription(unhex("0003 00000001 0001 61 ffffffff 00000001 0001 61 00000001 00000004 00000009 0002 7231"))
	require.NoError(t, err)
	require.Equal(t, Subscription{Topics: []string{"a"}, Owned: []TopicPartition{{Topic: "a", Partition: 4}}, Generation: 9, RackID: "r1"}, sub)
	got, _, err = DecodeAssignment(unhex("0009 00000001 0001 61 00000001 00000004 ffffffff 1234"))
	require.NoError(t, err)
	require.Equal(t, []TopicPartition{{Topic: "a", Partition: 4}}, got)

	got, _, err = DecodeAssignment(nil)
	require.NoError(t, err)
	require.Nil(t, got)

	asg := AppendAssignment(nil, parts)
	for n := 1; n < len(asg); n++ {
		_, _, err := DecodeAssignment(asg[:n])
		require.ErrorIs(t, err, ErrBadRecord, "cut to %d", n)
	}
	_, _, err = DecodeAssignment(unhex("0001 00000001 0001 61 00000001 ffffffff ffffffff"))
	require.ErrorIs(t, err, ErrBadRecord, "negative partition")
}

func FuzzDecodeGroupMetadata(f *testing.F) {
	f.Add(goldenMetaValue)
	f.Add(unhex("0004 02 78 00000002 02 70 00 0000018bcfe56800 02 02 6d 03 6931 02 63 02 68 00000014 0000000a 02 aa 02 bb 00 00"))
	f.Fuzz(func(t *testing.T, value []byte) {
		_, md, err := DecodeGroupMetadata(goldenMetaKey, value)
		if err != nil {
			return
		}
		// What decodes encodes (as v3) and decodes to the same.
		_, again, err := DecodeGroupMetadata(EncodeGroupMetadata("g", md))
		require.NoError(t, err)
		require.Equal(t, md, again)
	})
}
