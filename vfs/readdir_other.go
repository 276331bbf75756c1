//go:build !linux

package vfs

import "os"

// readDirOS returns the sorted names of the entries of dir (os.ReadDir).
func readDirOS(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}
