package topic

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxNameLength is the longest topic name Kafka accepts.
const MaxNameLength = 249

// ErrInvalidName means a topic name breaks Kafka's rule.
var ErrInvalidName = errors.New("topic: invalid topic name")

// ValidateName checks Kafka's rule for topic names: 1 to 249 characters from
// [a-zA-Z0-9._-], and neither "." nor "..". Such a name is also a safe file
// name, so no path trick can get past it. Names starting with "__" pass:
// they are reserved for internal topics, which the store enforces.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("topic: name is empty: %w", ErrInvalidName)
	case len(name) > MaxNameLength:
		return fmt.Errorf("topic: name of %d characters is longer than %d: %w", len(name), MaxNameLength, ErrInvalidName)
	case name == "." || name == "..":
		return fmt.Errorf("topic: name %q is not allowed: %w", name, ErrInvalidName)
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return !legal(r) }); i >= 0 {
		return fmt.Errorf("topic: name %q has %q at byte %d; names use [a-zA-Z0-9._-]: %w", name, name[i:i+1], i, ErrInvalidName)
	}
	return nil
}

func legal(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
}

// IsInternal reports whether name is reserved for internal topics (it starts
// with "__", as Kafka's __consumer_offsets does).
func IsInternal(name string) bool { return strings.HasPrefix(name, "__") }

// PartitionDir returns the directory name of a topic's partition, as Kafka
// names it: "<topic>-<partition>".
func PartitionDir(name string, partition int) string {
	return name + "-" + strconv.Itoa(partition)
}

// ParsePartitionDir is PartitionDir's inverse: it returns the topic and
// partition a directory name stands for, and false for a name that is no
// partition directory (no valid topic name, or a partition number that is
// not written as PartitionDir writes it: "t-01", "t-0.x-delete").
func ParsePartitionDir(dir string) (name string, partition int, ok bool) {
	i := strings.LastIndexByte(dir, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, ok := partitionNumber(dir[i+1:])
	if !ok || ValidateName(dir[:i]) != nil {
		return "", 0, false
	}
	return dir[:i], n, true
}

// partitionNumber parses s as PartitionDir writes a partition number:
// decimal digits without a sign or a leading zero, within int. It makes
// no error value: a store's Open asks it of every name in its directory.
func partitionNumber(s string) (int, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		d := int(s[i]) - '0'
		if d < 0 || d > 9 || n > (math.MaxInt-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
