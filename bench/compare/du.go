package main

import (
	"io/fs"
	"path/filepath"
)

// diskUsage is the apparent size of the regular files under dir (the sum of
// their lengths) and the bytes the file system allocated for them (-1
// where the platform does not say).
func diskUsage(dir string) (apparent, allocated int64, err error) {
	allocated = 0
	err = filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		apparent += fi.Size()
		if b := blocks(fi); b < 0 || allocated < 0 {
			allocated = -1
		} else {
			allocated += b
		}
		return nil
	})
	return apparent, allocated, err
}
