package strata

import "github.com/stratalog/strata/vfs"

// OpenOn opens a store on a file system, for tests that crash an in-memory
// one.
func OpenOn(fsys vfs.FS, dir string, opts *Options) (*Store, error) { return openOn(fsys, dir, opts) }

// EncodedAhead returns how many batches Produce calls waiting for room
// have encoded for the sender.
func (p *Producer) EncodedAhead() int64 { return p.encodedAhead.Load() }

// StoreErr is storeErr, for the test of the message rewriting.
func StoreErr(err error) error { return storeErr(err) }
