package segment

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzSplitFileName: SplitFileName accepts what a split at the first dot
// and strconv.ParseInt of 20 digits accept, with the same base and suffix,
// as ParseFileName does, and allocates nothing.
func FuzzSplitFileName(f *testing.F) {
	for _, name := range []string{"00000000000000368769.log", "00000000000000000000.index.swap", "00000000000000000000.",
		"99999999999999999999.log", "09223372036854775807.log", "09223372036854775808.log", "0000000000000000000.log",
		"partition.metadata", "0000000000000000000a.log", ""} {
		f.Add(name)
	}
	f.Fuzz(func(t *testing.T, name string) {
		base, suffix, ok := SplitFileName(name)
		rbase, rsuffix, rok := splitByCut(name)
		require.Equal(t, rok, ok, "%q", name)
		_, _, err := ParseFileName(name)
		require.Equal(t, ok, err == nil, "%q", name)
		if ok {
			require.Equal(t, rbase, base)
			require.Equal(t, rsuffix, suffix)
			require.Equal(t, name, FileName(base, "")+suffix)
		}
		require.Zero(t, testing.AllocsPerRun(10, func() { _, _, _ = SplitFileName(name) }))
	})
}

// splitByCut is SplitFileName by strings.Cut and strconv.ParseInt.
func splitByCut(name string) (int64, string, bool) {
	digits, rest, ok := strings.Cut(name, ".")
	if !ok || len(digits) != offsetDigits || strings.Trim(digits, "0123456789") != "" {
		return 0, "", false
	}
	base, err := strconv.ParseInt(digits, 10, 64)
	return base, "." + rest, err == nil
}
