//go:build unix && !linux

package strata

// listFD lists nothing where getdents64(2) is not at hand (false): the
// store lists its directory by name, as on any FS.
func listFD(int) ([]string, bool, error) { return nil, false, nil }
