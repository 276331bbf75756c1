package topic

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// ID is a topic id: 16 random bytes, as Kafka's Uuid, that tell a topic
// from an earlier topic of the same name. Committed offsets carry the id of
// the topic they were committed for, so a topic deleted and created again
// under its name never inherits the old topic's positions, and each
// partition directory records its topic's id in partition.metadata, as a
// Kafka broker writes it. The zero ID means none.
type ID [16]byte

// ErrInvalidID means a string is not a topic id.
var ErrInvalidID = errors.New("topic: invalid topic id")

// NewID returns a random topic id as Kafka makes them (Uuid.randomUuid): a
// version 4 UUID whose string form does not start with "-".
func NewID() ID {
	for {
		var id ID
		_, _ = rand.Read(id[:]) // never fails (crypto/rand)
		id[6] = id[6]&0x0f | 0x40
		id[8] = id[8]&0x3f | 0x80
		if !strings.HasPrefix(id.String(), "-") {
			return id
		}
	}
}

// IsZero reports whether id is the zero ID (no id).
func (id ID) IsZero() bool { return id == ID{} }

// String returns the id as Kafka prints it: URL-safe base64 without
// padding, 22 characters.
func (id ID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// ParseID parses an id in the form String returns. The zero id is refused,
// as Kafka refuses it in partition.metadata.
func ParseID(s string) (ID, error) {
	var id ID
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("topic: %.40q is not a topic id (22 characters of URL-safe base64): %w", s, ErrInvalidID)
	}
	copy(id[:], b)
	if id.IsZero() {
		return id, fmt.Errorf("topic: the zero topic id: %w", ErrInvalidID)
	}
	return id, nil
}

// MarshalText returns String's form, so that an ID is a JSON string.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText parses String's form.
func (id *ID) UnmarshalText(b []byte) error {
	v, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}
