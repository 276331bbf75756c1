package topic

import "testing"

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
