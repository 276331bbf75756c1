//go:build unix && !linux

package strata

// lockHolder says which process holds the lock on the file at path where
// the operating system can tell (Linux); on the other Unix systems it
// cannot (Windows takes no directory lock at all).
func lockHolder(path string) string { return "" }
