//go:build !linux

package vfs

// syncData is Sync outside Linux: there is no fdatasync on Windows, and
// on Darwin os.File.Sync is F_FULLFSYNC, the one call that reaches the
// disk's platter.
func (f osFile) syncData() error { return f.Sync() }
