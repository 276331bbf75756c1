package strata

import (
	"context"
	"errors"
	"strings"

	"github.com/stratalog/strata/compaction"
	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/log"
)

// storeError is an error as the store's API returns it: one "strata: "
// prefix, then the reason, in which the prefixes of the packages below
// ("partition: ", "topic: ", ...) are dropped, so that a message reads
// "strata: offset 9 of orders-0 out of range [0, 3]: offset out of range"
// rather than naming every layer it went through. It wraps the error it
// was made from: errors.Is and errors.As see the sentinels and types below,
// and the root sentinel that stands for a sentinel below of another name
// (see rootMatches).
type storeError struct {
	msg string
	err error
}

func (e *storeError) Error() string { return e.msg }
func (e *storeError) Unwrap() error { return e.err }

// Is reports whether target is the root sentinel for one of the lower
// sentinels in the error (rootMatches).
func (e *storeError) Is(target error) bool {
	for _, m := range rootMatches {
		if target == m.root && errors.Is(e.err, m.lower) {
			return true
		}
	}
	return false
}

// rootMatches are the sentinels of the packages below that a Store call
// can return and that no root sentinel is an alias of, each with the root
// sentinel that matches it, so that a user matches root sentinels only.
var rootMatches = []struct{ lower, root error }{
	{compaction.ErrMapTooSmall, ErrInvalidConfig}, // a key larger than Options.CleanerBufferBytes
	{log.ErrIncomplete, ErrCorrupt},               // a batch cut short where the log says there is one
	{log.ErrEmptyBatch, ErrNoRecords},
	{group.ErrUnknownMember, ErrFenced},           // a consumer the group no longer knows
	{group.ErrInvalidOffset, ErrOffsetOutOfRange}, // a negative offset
	{group.ErrUnknownPartition, ErrUnknownPartition},
	{group.ErrUnknownPartition, ErrUnknownTopic}, // the group cannot tell which: a topic deleted under a commit
}

// layerPrefixes are the package names the module's error messages start
// with.
var layerPrefixes = []string{"strata", "partition", "topic", "group", "txn", "segment", "index", "log", "compaction", "retention", "vfs"}

// storeErr returns err as the store's API reports it (see storeError). A
// context's own error, and nil, are returned as they are.
func storeErr(err error) error {
	switch err {
	case nil, context.Canceled, context.DeadlineExceeded:
		return err
	}
	if _, ok := err.(*storeError); ok {
		return err
	}
	return &storeError{msg: "strata: " + dropPrefixes(err.Error()), err: err}
}

// wrapErr replaces *err by storeErr(*err): a deferred call that makes every
// error an exported method returns a storeError.
func wrapErr(err *error) { *err = storeErr(*err) }

// dropPrefixes removes from msg the package prefixes ("partition: ") at
// its start and after each ": " or newline, outside quoted strings (a
// group's name may hold anything).
func dropPrefixes(msg string) string {
	var b strings.Builder
	b.Grow(len(msg))
	quoted, start := false, true
	for i := 0; i < len(msg); {
		if start {
			start = false
			if n := layerPrefixLen(msg[i:]); n > 0 {
				i += n
				start = true
				continue
			}
		}
		c := msg[i]
		switch {
		case quoted && c == '\\' && i+1 < len(msg):
			b.WriteString(msg[i : i+2])
			i += 2
			continue
		case c == '"':
			quoted = !quoted
		case c == '\n':
			quoted, start = false, true
		case !quoted && c == ':' && strings.HasPrefix(msg[i:], ": "):
			b.WriteString(": ")
			i += 2
			start = true
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// layerPrefixLen returns the length of the package prefix s starts with,
// "name: ", or 0.
func layerPrefixLen(s string) int {
	for _, p := range layerPrefixes {
		if len(s) > len(p)+1 && s[:len(p)] == p && s[len(p)] == ':' && s[len(p)+1] == ' ' {
			return len(p) + 2
		}
	}
	return 0
}
