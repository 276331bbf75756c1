package group

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/stratalog/strata/internal/wire"
)

// The group metadata record, Kafka's GroupMetadataKey and
// GroupMetadataValue (group-coordinator/src/main/resources/common/message),
// is described in the package documentation (doc.go), under "Group
// metadata".

// Versions of the group metadata record written by the encoders.
const (
	metadataKeyVersion   = 2 // GroupMetadataKey
	metadataValueVersion = 3 // Kafka's since 2.3 (MetadataVersion.groupMetadataValueVersion)
)

// ConsumerProtocolType is the protocol type of consumer groups, Kafka's
// ConsumerProtocol.PROTOCOL_TYPE: their members' subscription and
// assignment bytes are in the consumer protocol's encoding
// ([AppendSubscription], [AppendAssignment]).
const ConsumerProtocolType = "consumer"

// GroupMetadata is a group's membership as of its last rebalance, as
// Kafka's group coordinator persists it in __consumer_offsets (one record
// per group, the latest wins): written when a generation's assignment is
// complete, and when the group has lost its last member (no Members, no
// Protocol). A deleted group has a tombstone instead.
type GroupMetadata struct {
	// ProtocolType is the kind of group: [ConsumerProtocolType] for
	// consumers; "" for an empty group.
	ProtocolType string
	// Generation is the group's generation.
	Generation int32
	// Protocol is the protocol of the generation, for consumers the
	// assignor's name ("range", "cooperative-sticky", ...); "" (written as
	// null) for an empty group.
	Protocol string
	// Leader is the member id of the generation's leader, the member that
	// computed the assignment; "" (null) if none.
	Leader string
	// StateTime is when the group entered its current state (Kafka's
	// currentStateTimestamp), in whole milliseconds, UTC; zero if unknown.
	StateTime time.Time
	// Members are the members of the generation, sorted by member id.
	Members []MemberMetadata
}

// MemberMetadata is one member in a [GroupMetadata].
type MemberMetadata struct {
	MemberID   string // member id
	InstanceID string // group.instance.id of a static member; "" (null) for a dynamic one
	ClientID   string // the client's client.id
	ClientHost string // the client's address, as Kafka writes it ("/127.0.0.1")
	// RebalanceTimeout and SessionTimeout are the member's timeouts, in
	// whole milliseconds.
	RebalanceTimeout time.Duration
	SessionTimeout   time.Duration
	// Subscription is the member's protocol metadata for the group's
	// Protocol, and Assignment what the leader assigned it; for a consumer
	// group, a ConsumerProtocolSubscription and a
	// ConsumerProtocolAssignment ([DecodeSubscription],
	// [DecodeAssignment]). Never nil in a decoded record.
	Subscription []byte
	Assignment   []byte
}

// AppendGroupMetadataKey appends the __consumer_offsets key of group's
// metadata, version 2, to dst. It panics if group is longer than 32767
// bytes; [ValidateGroupID] checks it.
func AppendGroupMetadataKey(dst []byte, group string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, metadataKeyVersion)
	return appendString(dst, group)
}

// AppendGroupMetadataValue appends md as a GroupMetadataValue of version
// 3, the version Kafka writes, to dst. It panics if a string is longer
// than 32767 bytes or a member's bytes longer than 2 GiB.
func AppendGroupMetadataValue(dst []byte, md *GroupMetadata) []byte {
	dst = binary.BigEndian.AppendUint16(dst, metadataValueVersion)
	dst = appendString(dst, md.ProtocolType)
	dst = binary.BigEndian.AppendUint32(dst, uint32(md.Generation))
	dst = appendNullableString(dst, md.Protocol)
	dst = appendNullableString(dst, md.Leader)
	ts := int64(-1)
	if !md.StateTime.IsZero() {
		ts = md.StateTime.UnixMilli()
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(ts))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(md.Members)))
	for i := range md.Members {
		m := &md.Members[i]
		dst = appendString(dst, m.MemberID)
		dst = appendNullableString(dst, m.InstanceID)
		dst = appendString(dst, m.ClientID)
		dst = appendString(dst, m.ClientHost)
		dst = binary.BigEndian.AppendUint32(dst, uint32(millis32(m.RebalanceTimeout)))
		dst = binary.BigEndian.AppendUint32(dst, uint32(millis32(m.SessionTimeout)))
		dst = appendBytes(dst, m.Subscription)
		dst = appendBytes(dst, m.Assignment)
	}
	return dst
}

// EncodeGroupMetadata returns the record of group's metadata md: its key
// and value, or, for a nil md, the tombstone (a nil value) that deletes
// it. It panics where [AppendGroupMetadataKey] and
// [AppendGroupMetadataValue] do.
func EncodeGroupMetadata(group string, md *GroupMetadata) (key, value []byte) {
	key = AppendGroupMetadataKey(make([]byte, 0, 4+len(group)), group)
	if md == nil {
		return key, nil
	}
	return key, AppendGroupMetadataValue(nil, md)
}

// DecodeGroupMetadata decodes a __consumer_offsets record of group
// metadata: the group and its metadata, nil for a tombstone (a nil
// value). It reads every value version Kafka has written (0 to 4); a
// field a version lacks is zero.
//
// It returns an error wrapping [ErrNotGroupMetadata] for a well-formed key
// of another record type (an offset commit, key versions 0 and 1, or
// KIP-848's records) and [ErrBadRecord] for anything malformed; it never
// panics. The result shares no memory with key and value.
func DecodeGroupMetadata(key, value []byte) (group string, md *GroupMetadata, err error) {
	r := wire.NewReader(key)
	version := r.Int16()
	switch {
	case r.Bad() || version < 0:
		return "", nil, fmt.Errorf("group: key of %d bytes: %w", len(key), ErrBadRecord)
	case version != metadataKeyVersion:
		return "", nil, fmt.Errorf("group: key version %d: %w", version, ErrNotGroupMetadata)
	}
	group = r.Str()
	if r.Bad() || r.Len() != 0 {
		return "", nil, fmt.Errorf("group: group metadata key of %d bytes: %w", len(key), ErrBadRecord)
	}
	if value == nil {
		return group, nil, nil
	}
	md, err = decodeMetadataValue(value)
	if err != nil {
		return "", nil, fmt.Errorf("group: metadata of group %q: %w", group, err)
	}
	return group, md, nil
}

// decodeMetadataValue decodes a GroupMetadataValue of any version.
func decodeMetadataValue(value []byte) (*GroupMetadata, error) {
	r := wire.NewReader(value)
	v := r.Int16()
	if r.Bad() || v < 0 || v > 4 {
		return nil, fmt.Errorf("group metadata value version %d: %w", v, ErrBadRecord)
	}
	flex := v >= 4
	f := fields{r: &r, flex: flex}
	md := &GroupMetadata{}
	md.ProtocolType = f.str()
	md.Generation = r.Int32()
	md.Protocol = f.nullableStr()
	md.Leader = f.nullableStr()
	if v >= 2 {
		if ts := r.Int64(); ts != -1 {
			md.StateTime = time.UnixMilli(ts).UTC()
		}
	}
	n := f.count()
	if n > r.Len() { // every member takes bytes: a bound before allocating
		r.Fail()
	}
	if n > 0 && !r.Bad() {
		md.Members = make([]MemberMetadata, n)
	}
	for i := 0; i < n && !r.Bad(); i++ {
		m := &md.Members[i]
		m.MemberID = f.str()
		if v >= 3 {
			m.InstanceID = f.nullableStr()
		}
		m.ClientID = f.str()
		m.ClientHost = f.str()
		if v >= 1 {
			m.RebalanceTimeout = time.Duration(r.Int32()) * time.Millisecond
		}
		m.SessionTimeout = time.Duration(r.Int32()) * time.Millisecond
		m.Subscription = append([]byte{}, f.bytes()...)
		m.Assignment = append([]byte{}, f.bytes()...)
		f.tags()
	}
	f.tags()
	if r.Bad() || r.Len() != 0 {
		return nil, fmt.Errorf("group metadata value version %d of %d bytes: %w", v, len(value), ErrBadRecord)
	}
	return md, nil
}

// fields reads the fields of a version that may be flexible: compact
// strings, arrays and bytes, and tagged fields (skipped), in one.
type fields struct {
	r    *wire.Reader
	flex bool
}

func (f fields) str() string {
	if f.flex {
		return f.r.CompactStr()
	}
	return f.r.Str()
}

func (f fields) nullableStr() string {
	if f.flex {
		s, _ := f.r.CompactNullableStr()
		return s
	}
	s, _ := f.r.NullableStr()
	return s
}

func (f fields) bytes() []byte {
	if f.flex {
		return f.r.CompactBytes()
	}
	return f.r.Bytes()
}

// count reads an array's length; a null array is bad.
func (f fields) count() int {
	if f.flex {
		n := f.r.Uvarint()
		if n == 0 {
			f.r.Fail()
		}
		return n - 1
	}
	n := f.r.Int32()
	if n < 0 {
		f.r.Fail()
		return 0
	}
	return int(n)
}

func (f fields) tags() {
	if f.flex {
		f.r.TaggedFields(func(int, []byte) bool { return true })
	}
}

// appendNullableString appends s as a nullable string, "" being null.
func appendNullableString(dst []byte, s string) []byte {
	if s == "" {
		return binary.BigEndian.AppendUint16(dst, math.MaxUint16) // -1
	}
	return appendString(dst, s)
}

// appendBytes appends b as bytes of an int32 length (empty for nil).
func appendBytes(dst, b []byte) []byte {
	if len(b) > math.MaxInt32 {
		panic(fmt.Sprintf("group: %d bytes do not fit the record format", len(b)))
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// millis32 returns d in milliseconds, saturated to an int32.
func millis32(d time.Duration) int32 {
	return int32(min(max(d.Milliseconds(), math.MinInt32), math.MaxInt32))
}
