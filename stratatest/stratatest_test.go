package stratatest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
	"github.com/stratalog/strata/vfs"
)

// Open given the operating system's file system keeps the store in the
// test's temporary directory, not at a fixed path of the real disk.
func TestOpenOSFileSystem(t *testing.T) {
	s := stratatest.Open(t, &strata.Options{FS: vfs.OS})
	if err := s.CreateTopic("events", strata.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Dir(), os.TempDir()) {
		t.Fatalf("store in %s, want a directory under %s", s.Dir(), os.TempDir())
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "events-0")); err != nil {
		t.Fatalf("topic not on disk in %s: %v", s.Dir(), err)
	}
}
