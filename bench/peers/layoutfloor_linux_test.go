package peers

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestLayoutFloor writes through the layout-floor peer (Strata's writes),
// reopens with its floor, and checks that it finds the last record, holds
// the store's lock, leaves the directory for Strata to reopen clean, and
// refuses a log whose batches do not end where the index says.
func TestLayoutFloor(t *testing.T) {
	const n, per = 2500, 100
	rec := func(i int64) Rec {
		return Rec{Key: fmt.Appendf(nil, "key-%012d", i), Value: bytes.Repeat([]byte{byte(i)}, 100)}
	}
	dir := filepath.Join(t.TempDir(), "floor")
	l, err := openLayoutFloor(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < n; i += per {
		recs := make([]Rec, per)
		for j := range recs {
			recs[j] = rec(i + int64(j))
		}
		if err := l.Append(recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	checkLast := func(l Log, who string) {
		t.Helper()
		want := rec(n - 1)
		called := false
		if err := l.Get(n-1, func(k, v []byte) {
			called = true
			if !bytes.Equal(k, want.Key) || !bytes.Equal(v, want.Value) {
				t.Errorf("%s read %q/%x as the last record", who, k, v)
			}
		}); err != nil || !called {
			t.Fatalf("%s: Get(%d): %v (called %v)", who, n-1, err, called)
		}
	}
	f, err := openLayoutFloor(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.(*floorLog); !ok {
		t.Fatalf("a reopen of a closed store is a %T, not the floor", f)
	}
	checkLast(f, "the floor")
	if err := f.Get(n-2, func(_, _ []byte) {}); err == nil {
		t.Error("the floor answered for a record other than the last")
	}
	if _, err := layoutFloor(dir); err == nil {
		t.Fatal("a second floor took the lock the first holds")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".clean-shutdown")); err != nil {
		t.Fatalf("the clean-shutdown marker is not back: %v", err)
	}
	s, err := openStrata(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkLast(s, "strata after the floor")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	logFile := filepath.Join(dir, strataTopic+"-0", "00000000000000000000.log")
	fi, err := os.Stat(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(logFile, fi.Size()-1); err != nil {
		t.Fatal(err)
	}
	if _, err := layoutFloor(dir); err == nil {
		t.Fatal("the floor took a log cut inside its last batch")
	}
}
