package vfs

// IsOS reports whether the files of fsys are the operating system's: fsys
// is [OS], or a file system that wraps it and says so with a method
// OSFiles() bool returning true, as [NoSync] of OS does. Such files hold a
// descriptor each while open and a memory mapping each while mapped, both
// counted against the process's limits, and other processes can open them
// too. A file system that wraps another should forward OSFiles to it.
func IsOS(fsys FS) bool {
	if fsys == OS {
		return true
	}
	o, ok := fsys.(interface{ OSFiles() bool })
	return ok && o.OSFiles()
}

// OSFiles reports that the files are the operating system's (see [IsOS]).
func (osFS) OSFiles() bool { return true }

// OSFiles reports whether the wrapped file system's files are the
// operating system's (see [IsOS]).
func (n noSyncFS) OSFiles() bool { return IsOS(n.FS) }
