package segment

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// File suffixes, as Kafka names them.
const (
	LogSuffix       = ".log"       // record batches
	IndexSuffix     = ".index"     // offset index
	TimeIndexSuffix = ".timeindex" // time index
	DeletedSuffix   = ".deleted"   // scheduled for removal
	CleanedSuffix   = ".cleaned"   // compaction output in progress
	SwapSuffix      = ".swap"      // compaction output ready to swap in
)

// offsetDigits is the width of the zero-padded base offset in file names, so
// that a plain listing sorts segments by offset.
const offsetDigits = 20

// FileName returns the name of a segment file: the base offset as 20
// zero-padded digits followed by suffix, for example
// "00000000000000368769.log". The base offset must not be negative.
func FileName(base int64, suffix string) string {
	var b strings.Builder
	b.Grow(offsetDigits + len(suffix))
	writeFileName(&b, base, suffix)
	return b.String()
}

// writeFileName writes FileName(base, suffix) to b.
func writeFileName(b *strings.Builder, base int64, suffix string) {
	var d [offsetDigits]byte
	s := strconv.AppendInt(d[:0], base, 10)
	b.WriteString("00000000000000000000"[:max(0, offsetDigits-len(s))])
	b.Write(s)
	b.WriteString(suffix)
}

// filePathIn returns filepath.Join(dir, FileName(base, kind)+tmp) in one
// allocation when dir is a clean path other than "", "." and "/" (where
// Join would change more than the separator between the two); kind and
// tmp hold no separator.
func filePathIn(dir string, base int64, kind, tmp string) string {
	if dir == "" || dir == "." || dir == string(filepath.Separator) || filepath.Clean(dir) != dir {
		return filepath.Join(dir, FileName(base, kind)+tmp)
	}
	var b strings.Builder
	b.Grow(len(dir) + 1 + offsetDigits + len(kind) + len(tmp))
	b.WriteString(dir)
	b.WriteByte(filepath.Separator)
	writeFileName(&b, base, kind)
	b.WriteString(tmp)
	return b.String()
}

// ParseFileName splits a segment file name into its base offset and its
// suffix (everything from the first dot, such as ".log" or ".index.swap").
// It fails for a name that is not 20 digits followed by a suffix. It
// allocates nothing for a name it takes, and one small error for one it
// does not: a partition's listing passes every name of its directory
// through it.
func ParseFileName(name string) (base int64, suffix string, err error) {
	base, suffix, ok := SplitFileName(name)
	if !ok {
		outOfRange := strings.IndexByte(name, '.') == offsetDigits && strings.Trim(name[:offsetDigits], "0123456789") == ""
		return 0, "", &nameError{name: name, outOfRange: outOfRange}
	}
	return base, suffix, nil
}

// SplitFileName is ParseFileName that reports a name that is not a
// segment file's with false instead of an error, and so allocates nothing
// for the other names of a listing (checkpoints, partition.metadata). The
// suffix is a substring of name.
func SplitFileName(name string) (base int64, suffix string, ok bool) {
	if strings.IndexByte(name, '.') != offsetDigits {
		return 0, "", false
	}
	for i := range offsetDigits {
		c := name[i]
		if c < '0' || c > '9' {
			return 0, "", false
		}
		if base > (math.MaxInt64-int64(c-'0'))/10 {
			return 0, "", false // out of range
		}
		base = base*10 + int64(c-'0')
	}
	return base, name[offsetDigits:], true
}

// nameError is ParseFileName's error for name, which matches ErrBadName;
// its message is made only when asked for.
type nameError struct {
	name       string
	outOfRange bool
}

func (e *nameError) Error() string {
	if e.outOfRange {
		return fmt.Sprintf("segment: %q has a base offset out of range: %v", e.name, ErrBadName)
	}
	return fmt.Sprintf("segment: %q is not a segment file name: %v", e.name, ErrBadName)
}

func (e *nameError) Unwrap() error { return ErrBadName }
