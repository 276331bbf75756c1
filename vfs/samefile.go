package vfs

import "os"

// SameFile reports whether the open file f is the file that name now
// names in fsys (the same inode: not one that replaced it under the name
// since f was opened, as a rename over it does), for a reader of files
// that another process renames and removes. known is false where it
// cannot tell: a file system other than OS and Mem, or a wrapper of one.
// A name that names nothing is not f.
func SameFile(fsys FS, f File, name string) (same, known bool) {
	switch f := f.(type) {
	case osFile:
		a, err := f.File.Stat()
		if err != nil {
			return false, false
		}
		b, err := os.Stat(name)
		if err != nil {
			return false, os.IsNotExist(err)
		}
		return os.SameFile(a, b), true
	case *memFile:
		m, ok := fsys.(*Mem)
		if !ok || m != f.fs {
			return false, false
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		nd, err := m.walkLocked(splitPath(name))
		return err == nil && nd == f.node, true
	}
	return false, false
}
