package vfs

// SameFile reports whether the open file f is the file that name now
// names in fsys (the same inode: not one that replaced it under the name
// since f was opened, as a rename over it does), for a reader of files
// that another process renames and removes. known is false where it
// cannot tell: a file system other than OS and Mem, or a wrapper of one.
// A name that names nothing is not f.
func SameFile(fsys FS, f File, name string) (same, known bool) {
	switch f := f.(type) {
	case osFile:
		return f.sameFile(name)
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
