package segment

import (
	"errors"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// parseFileNameRef is ParseFileName as strconv would have it: the
// reference FuzzParseFileName holds it to.
func parseFileNameRef(name string) (int64, string, bool) {
	digits, rest, ok := strings.Cut(name, ".")
	if !ok || len(digits) != offsetDigits || strings.ContainsAny(digits, "+-") {
		return 0, "", false
	}
	base, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, "", false
	}
	return base, "." + rest, true
}

// FuzzParseFileName: ParseFileName takes exactly the names the reference
// takes, with the same base offset and suffix, and fails every other with
// an error matching ErrBadName that names it.
func FuzzParseFileName(f *testing.F) {
	for _, s := range []string{"00000000000000000000.log", "09223372036854775807.timeindex", "09223372036854775808.log",
		"99999999999999999999.log", "0000000000000000001.log", "+0000000000000000001.log", "00000000000000000042.log.swap",
		"partition.metadata", "leader-epoch-checkpoint", "", "00000000000000000000", "0000000000000000000_.index"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		base, suffix, err := ParseFileName(name)
		wantBase, wantSuffix, ok := parseFileNameRef(name)
		if !ok {
			require.ErrorIs(t, err, ErrBadName)
			require.Contains(t, err.Error(), strconv.Quote(name))
			return
		}
		require.NoError(t, err)
		require.Equal(t, wantBase, base)
		require.Equal(t, wantSuffix, suffix)
	})
}

// TestParseFileNameAllocatesNothing: parsing a segment's file names costs
// no allocation, and a name that is not one a single small error.
func TestParseFileNameAllocatesNothing(t *testing.T) {
	names := []string{"00000000000000368769.log", "00000000000000368769.index", "00000000000000368769.timeindex", "00000000000000368769.snapshot"}
	require.Zero(t, testing.AllocsPerRun(100, func() {
		for _, n := range names {
			if _, _, err := ParseFileName(n); err != nil {
				t.Fatal(err)
			}
		}
	}))
	require.LessOrEqual(t, testing.AllocsPerRun(100, func() {
		if _, _, err := ParseFileName("partition.metadata"); !errors.Is(err, ErrBadName) {
			t.Fatal(err)
		}
	}), 1.0)
}

// BenchmarkParseFileName parses the names of a partition directory of one
// segment, as Open's listing does.
func BenchmarkParseFileName(b *testing.B) {
	names := []string{"00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.snapshot",
		"00000000000000000000.timeindex", "leader-epoch-checkpoint", "partition.metadata"}
	b.ReportAllocs()
	for b.Loop() {
		for _, n := range names {
			_, _, _ = ParseFileName(n)
		}
	}
}

// TestFilePathIn checks filePathIn against filepath.Join for clean and
// unclean directories, the ones Join treats apart, and bases of every width.
func TestFilePathIn(t *testing.T) {
	dirs := []string{"", ".", "/", "..", "p-0", "a/b", "/tmp/s/t-0", "a/", "a//b", "./a", "a/./b", "a/../b", "/a/..", "../x"}
	for _, dir := range dirs {
		for _, base := range []int64{0, 7, 368769, math.MaxInt64} {
			for _, kind := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
				for _, tmp := range []string{"", SwapSuffix} {
					want := filepath.Join(dir, FileName(base, kind)+tmp)
					if got := filePathIn(dir, base, kind, tmp); got != want {
						t.Errorf("filePathIn(%q, %d, %q, %q) = %q, want %q", dir, base, kind, tmp, got, want)
					}
				}
			}
		}
	}
	if got := FileName(368769, LogSuffix); got != "00000000000000368769.log" {
		t.Errorf("FileName(368769, .log) = %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = filePathIn("/tmp/s/t-0", 368769, LogSuffix, "") }); n != 1 {
		t.Errorf("filePathIn of a clean directory: %v allocations, want 1", n)
	}
}
