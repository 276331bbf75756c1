package strata_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratalog/strata"
)

// TestLockedNamesTheHolder: the ErrLocked of a second Open names the
// process that holds the lock (this one) and its program.
func TestLockedNamesTheHolder(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = strata.Open(dir, nil)
	if !errors.Is(err, strata.ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	want := fmt.Sprintf("%s is held by process %d (%s", dir, os.Getpid(), filepath.Base(os.Args[0]))
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "this process)") {
		t.Fatalf("second Open: %q, want it to say %q... this process)", err, want)
	}
}
