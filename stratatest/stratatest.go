// Package stratatest opens Strata stores for tests, as net/http/httptest
// starts servers: with SyncNever (tests need no fsync), closed when the test
// ends.
//
// [Open] keeps the store in memory (a fresh vfs.Mem of its own), so it costs
// microseconds and leaves no files; use it unless the test needs real files.
// [OpenOnDisk] keeps the store in t.TempDir(), for tests that look at the
// files with the os package, reopen the directory from another process, or
// measure the disk.
package stratatest

import (
	"testing"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// memDir is the directory of the stores Open makes, inside their own Mem.
const memDir = "/store"

// Open returns a new store with SyncNever and any other options given (opts
// may be nil), closed at the end of the test. Unless opts sets FS, the
// store is in memory: in a directory of a new vfs.Mem that no other
// store shares, so nothing is written to disk and the test's stores are
// independent. Its Dir is a path inside that Mem, not on disk: a test that
// needs the files, or a second Open of the directory, uses OpenOnDisk. An
// FS on the operating system's file system (vfs.IsOS) gets a directory of
// t.TempDir(), as with OpenOnDisk. It fails the test if the store cannot be
// opened or closed.
func Open(t testing.TB, opts *strata.Options) *strata.Store {
	t.Helper()
	o := options(opts)
	switch {
	case o.FS == nil:
		o.FS = vfs.NewMem()
	case vfs.IsOS(o.FS):
		return open(t, t.TempDir(), o)
	}
	return open(t, memDir, o)
}

// OpenOnDisk is Open on the operating system's file system: the store is in
// a new directory of t.TempDir() (Store.Dir), which the test may read with
// the os package. opts.FS must be nil, vfs.OS, or a file system on it
// (vfs.IsOS).
func OpenOnDisk(t testing.TB, opts *strata.Options) *strata.Store {
	t.Helper()
	o := options(opts)
	if o.FS == nil {
		o.FS = vfs.OS
	}
	if !vfs.IsOS(o.FS) {
		t.Fatalf("stratatest: OpenOnDisk with a file system other than vfs.OS; use Open")
	}
	return open(t, t.TempDir(), o)
}

// options copies opts, defaulting Sync to SyncNever.
func options(opts *strata.Options) strata.Options {
	o := strata.Options{}
	if opts != nil {
		o = *opts
	}
	if o.Sync == (strata.SyncPolicy{}) {
		o.Sync = strata.SyncNever
	}
	return o
}

func open(t testing.TB, dir string, o strata.Options) *strata.Store {
	t.Helper()
	s, err := strata.Open(dir, &o)
	if err != nil {
		t.Fatalf("stratatest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("stratatest: closing the store: %v", err)
		}
	})
	return s
}
