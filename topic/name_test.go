package topic

import (
	"strconv"
	"strings"
	"testing"
)

func TestParsePartitionDir(t *testing.T) {
	for _, c := range []struct {
		dir  string
		name string
		part int
		ok   bool
	}{
		{"orders-0", "orders", 0, true},
		{"orders-12", "orders", 12, true},
		{"a-1-0", "a-1", 0, true},
		{"__consumer_offsets-0", "__consumer_offsets", 0, true},
		{"orders-01", "", 0, false},
		{"orders--1", "orders-", 1, true}, // topic "orders-"
		{"orders", "", 0, false},
		{"-0", "", 0, false},
		{"t-0.abc-delete", "", 0, false},
		{"bad name-0", "", 0, false},
		{"t-", "", 0, false},
		{"t-+1", "", 0, false},
		{"t-1a", "", 0, false},
		{"t-" + strconv.Itoa(int(^uint(0)>>1)), "t", int(^uint(0) >> 1), true},
		{"t-99999999999999999999", "", 0, false},
	} {
		name, part, ok := ParsePartitionDir(c.dir)
		if name != c.name || part != c.part || ok != c.ok {
			t.Errorf("ParsePartitionDir(%q) = %q, %d, %v; want %q, %d, %v", c.dir, name, part, ok, c.name, c.part, c.ok)
		}
		if ok && PartitionDir(name, part) != c.dir {
			t.Errorf("PartitionDir(%q, %d) = %q, want %q", name, part, PartitionDir(name, part), c.dir)
		}
	}
}

// FuzzParsePartitionDir holds ParsePartitionDir to its definition: the
// name before the last '-' a valid topic name, and after it a number that
// strconv.Atoi reads and strconv.Itoa writes back the same, not negative.
func FuzzParsePartitionDir(f *testing.F) {
	for _, s := range []string{"orders-0", "orders-01", "a-1-0", "t-+1", "t--1", "t-9223372036854775808", ".clean-shutdown", "topics.json", "t-0.abc-delete"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dir string) {
		name, part, ok := ParsePartitionDir(dir)
		wantName, wantPart, wantOK := "", 0, false
		if i := strings.LastIndexByte(dir, '-'); i > 0 {
			n, err := strconv.Atoi(dir[i+1:])
			if err == nil && n >= 0 && strconv.Itoa(n) == dir[i+1:] && ValidateName(dir[:i]) == nil {
				wantName, wantPart, wantOK = dir[:i], n, true
			}
		}
		if name != wantName || part != wantPart || ok != wantOK {
			t.Fatalf("ParsePartitionDir(%q) = %q, %d, %v; want %q, %d, %v", dir, name, part, ok, wantName, wantPart, wantOK)
		}
		if ok && PartitionDir(name, part) != dir {
			t.Fatalf("PartitionDir(%q, %d) = %q, want %q", name, part, PartitionDir(name, part), dir)
		}
	})
}
