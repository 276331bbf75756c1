package segment

import (
	"fmt"
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
	var b [offsetDigits]byte
	s := strconv.AppendInt(b[:0], base, 10)
	return strings.Repeat("0", max(0, offsetDigits-len(s))) + string(s) + suffix
}

// ParseFileName splits a segment file name into its base offset and its
// suffix (everything from the first dot, such as ".log" or ".index.swap").
// It fails for a name that is not 20 digits followed by a suffix.
func ParseFileName(name string) (base int64, suffix string, err error) {
	digits, rest, ok := strings.Cut(name, ".")
	if !ok || len(digits) != offsetDigits {
		return 0, "", fmt.Errorf("segment: %q is not a segment file name: %w", name, ErrBadName)
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, "", fmt.Errorf("segment: %q is not a segment file name: %w", name, ErrBadName)
		}
	}
	base, err = strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("segment: %q has a base offset out of range: %w", name, ErrBadName)
	}
	return base, "." + rest, nil
}
