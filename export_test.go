package strata

import "github.com/stratalog/strata/internal/vfs"

// OpenOn opens a store on a file system, for tests that crash an in-memory
// one.
func OpenOn(fsys vfs.FS, dir string, opts *Options) (*Store, error) { return openOn(fsys, dir, opts) }
