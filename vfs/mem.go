package vfs

import (
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Mem is an in-memory file system for tests that knows what a power cut would
// keep. It is safe for concurrent use.
//
// # Durability
//
// Every file (inode) has its current contents, which reads and writes see, and
// its durable contents: File.Sync and File.SyncMap copy the former to the
// latter. Every directory has its current entries, which creating, renaming
// and removing change at once, and its durable entries: SyncDir copies the
// former to the latter, each entry naming an inode. Directories themselves are
// durable as soon as MkdirAll creates them (as if the parent had been synced
// for that one entry), a simplification: only files need SyncDir.
//
// [Mem.Crash] returns what a power cut leaves: a new Mem whose namespace is
// the durable one and whose files hold their durable contents. A file that was
// synced but whose directory entry was not is gone; a rename that was not
// followed by SyncDir on both directories is undone (or, across directories,
// may leave the file under both names, like a hard link). The old Mem is dead:
// every later call on it, or on a file opened from it, fails with
// [ErrCrashed]. [Mem.CrashKeepingPrefix] also keeps a random part of the
// unsynced tail of files that were only appended to.
//
// # Mappings
//
// File.Map returns a slice aliasing the file's current contents: writes through
// it are writes to the file, seen by ReadAt at once, and made durable by
// SyncMap or Sync. A mapping may be larger than the file, reserving room (and
// memory) for it to grow into, as mmap(2) past the end of a file does. Mem
// keeps the bytes where the mapping is as long as the file has a live mapping
// (one not yet unmapped), so a mapped file cannot grow past its largest
// mapping: such a WriteAt or Truncate fails with [ErrMapped].
// Shrinking is allowed; the mapping stays valid memory, but bytes past the
// end of the file are not the file's (on the OS, touching them is SIGBUS).
//
// A file whose contents or mapping reach 1 MiB lives, on unix and Windows,
// in memory of its own that the system gives out as the file grows (on
// unix page by page as it is written, on Windows committed a MiB at a time
// as the file's size reaches it): a 1 GiB mapping reserved for a log to
// grow into, or an index preallocated to 10 MiB, costs the bytes the file
// holds, not its size, and takes nothing from the Go heap. Elsewhere such
// files are on the Go heap, a mapping's whole size. The race detector sees
// accesses through the mappings of smaller files, as it sees heap memory,
// but not through those of such large ones (nor through an OS mapping).
// When the last mapping of such a file is unmapped while the file holds
// less than 1 MiB, its contents move back to the heap and the mapping's
// memory is released, to be reused for another file: touching it
// afterwards is undefined (a crash on the OS).
//
// # Failures
//
// An [Injector] ([Mem.SetInjector]) can fail any operation, and
// [Mem.SetDiskLimit] makes writes fail with ENOSPC; [Mem.Ops] and [Mem.Count]
// say how many operations ran. Errors are those of the os package: an
// *fs.PathError (or *os.LinkError for Rename) wrapping a syscall.Errno, so
// errors.Is(err, fs.ErrNotExist) and the like behave as on [OS].
//
// Paths are rooted at the Mem's root: "a/b", "/a/b" and "./a/b" name the same
// file.
type Mem struct {
	mu struct {
		sync.Mutex
		root     *memNode
		crashed  bool
		injector Injector
		counts   [numOps]int
		limit    int64 // disk limit in bytes, negative for none
		used     int64 // total size of files with links > 0
	}
}

// memNode is a directory or a file (an inode). Its fields are guarded by the
// Mem's mutex.
type memNode struct {
	isDir bool

	// Directories.
	entries map[string]*memNode // current namespace
	durable map[string]*memNode // entries as of the last SyncDir

	// Files.
	data   []byte  // current contents; mappings alias its backing array
	region *region // where data's array is, if not on the Go heap
	synced []byte  // durable contents; never aliases data
	links  int     // current directory entries naming the file
	maps   int     // live mappings (Map calls not yet unmapped)
}

func newDirNode() *memNode {
	return &memNode{isDir: true, entries: map[string]*memNode{}, durable: map[string]*memNode{}}
}

var _ FS = (*Mem)(nil)

// NewMem returns an empty in-memory file system holding only its root
// directory.
func NewMem() *Mem {
	m := &Mem{}
	m.mu.root = newDirNode()
	m.mu.limit = -1
	return m
}

// splitPath cleans name and returns its components below the root.
func splitPath(name string) []string {
	p := path.Clean("/" + filepath.ToSlash(name))
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

// beginLocked starts operation op on path: it fails if m has crashed, counts
// the operation and runs the injector.
func (m *Mem) beginLocked(op Op, path string) error {
	if m.mu.crashed {
		return &fs.PathError{Op: op.String(), Path: path, Err: ErrCrashed}
	}
	m.mu.counts[op]++
	if m.mu.injector != nil {
		if err := m.mu.injector(op, path); err != nil {
			return &fs.PathError{Op: op.String(), Path: path, Err: err}
		}
	}
	return nil
}

// walkLocked returns the node at the path made of parts.
func (m *Mem) walkLocked(parts []string) (*memNode, error) {
	nd := m.mu.root
	for _, p := range parts {
		if !nd.isDir {
			return nil, syscall.ENOTDIR
		}
		nd = nd.entries[p]
		if nd == nil {
			return nil, syscall.ENOENT
		}
	}
	return nd, nil
}

// parentLocked returns the directory that holds name and name's last
// component, which is empty for the root.
func (m *Mem) parentLocked(name string) (*memNode, string, error) {
	parts := splitPath(name)
	if len(parts) == 0 {
		return nil, "", nil
	}
	dir, err := m.walkLocked(parts[:len(parts)-1])
	if err == nil && !dir.isDir {
		err = syscall.ENOTDIR
	}
	if err != nil {
		return nil, "", err
	}
	return dir, parts[len(parts)-1], nil
}

// unlinkLocked accounts for the removal of a directory entry naming nd, and
// of everything below it when nd is a directory.
func (m *Mem) unlinkLocked(nd *memNode) {
	if nd.isDir {
		for _, child := range nd.entries {
			m.unlinkLocked(child)
		}
		return
	}
	nd.links--
	if nd.links == 0 {
		m.mu.used -= int64(len(nd.data))
	}
}

// OpenFile opens a file with the flags of os.OpenFile: os.O_RDONLY,
// os.O_WRONLY, os.O_RDWR, os.O_CREATE, os.O_EXCL and os.O_TRUNC. The
// permission bits are ignored. Opening a directory fails with EISDIR.
func (m *Mem) OpenFile(name string, flag int, _ os.FileMode) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	op := OpOpen
	if flag&os.O_CREATE != 0 {
		op = OpCreate
	}
	if err := m.beginLocked(op, name); err != nil {
		return nil, err
	}
	fail := func(err error) (File, error) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	dir, base, err := m.parentLocked(name)
	if err != nil {
		return fail(err)
	}
	if dir == nil {
		return fail(syscall.EISDIR)
	}
	nd := dir.entries[base]
	switch {
	case nd == nil && flag&os.O_CREATE == 0:
		return fail(syscall.ENOENT)
	case nd == nil:
		nd = &memNode{links: 1}
		dir.entries[base] = nd
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		return fail(syscall.EEXIST)
	case nd.isDir:
		return fail(syscall.EISDIR)
	}
	if flag&os.O_TRUNC != 0 {
		_ = m.resizeLocked(nd, 0) // shrinking cannot fail
	}
	access := flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	return &memFile{
		fs:     m,
		name:   name,
		node:   nd,
		read:   access != os.O_WRONLY,
		write:  access != os.O_RDONLY,
		append: flag&os.O_APPEND != 0,
	}, nil
}

// Remove removes a file or an empty directory from the current namespace; the
// durable namespace changes at SyncDir of its parent.
func (m *Mem) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(OpRemove, name); err != nil {
		return err
	}
	fail := func(err error) error { return &fs.PathError{Op: "remove", Path: name, Err: err} }
	dir, base, err := m.parentLocked(name)
	switch {
	case err != nil:
		return fail(err)
	case dir == nil:
		return fail(syscall.EBUSY)
	}
	nd := dir.entries[base]
	switch {
	case nd == nil:
		return fail(syscall.ENOENT)
	case nd.isDir && len(nd.entries) > 0:
		return fail(syscall.ENOTEMPTY)
	}
	delete(dir.entries, base)
	m.unlinkLocked(nd)
	return nil
}

// RemoveAll removes name and everything below it from the current namespace.
// A missing name is not an error.
func (m *Mem) RemoveAll(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(OpRemove, name); err != nil {
		return err
	}
	dir, base, err := m.parentLocked(name)
	switch {
	case err == syscall.ENOENT:
		return nil
	case err != nil:
		return &fs.PathError{Op: "unlinkat", Path: name, Err: err}
	case dir == nil:
		return &fs.PathError{Op: "RemoveAll", Path: name, Err: syscall.EINVAL}
	}
	if nd := dir.entries[base]; nd != nil {
		delete(dir.entries, base)
		m.unlinkLocked(nd)
	}
	return nil
}

// Rename renames a file or directory, replacing a target file. As with
// os.Rename, renaming onto a directory fails with EEXIST. The durable
// namespace changes at SyncDir of each directory involved.
func (m *Mem) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(OpRename, newname); err != nil {
		return err
	}
	fail := func(err error) error {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	odir, obase, err := m.parentLocked(oldname)
	switch {
	case err != nil:
		return fail(err)
	case odir == nil:
		return fail(syscall.EBUSY)
	}
	nd := odir.entries[obase]
	if nd == nil {
		return fail(syscall.ENOENT)
	}
	ndir, nbase, err := m.parentLocked(newname)
	switch {
	case err != nil:
		return fail(err)
	case ndir == nil:
		return fail(syscall.EEXIST)
	}
	target := ndir.entries[nbase]
	switch {
	case target == nd:
		return nil // the same file: nothing to do, as rename(2) says
	case target != nil && target.isDir:
		return fail(syscall.EEXIST)
	case target != nil && nd.isDir:
		return fail(syscall.ENOTDIR)
	case nd.isDir && m.containsLocked(nd, ndir):
		return fail(syscall.EINVAL)
	}
	if target != nil {
		m.unlinkLocked(target)
	}
	delete(odir.entries, obase)
	ndir.entries[nbase] = nd
	return nil
}

// containsLocked reports whether dir is below (or is) the directory top in
// the current namespace.
func (m *Mem) containsLocked(top, dir *memNode) bool {
	if top == dir {
		return true
	}
	for _, child := range top.entries {
		if child.isDir && m.containsLocked(child, dir) {
			return true
		}
	}
	return false
}

// MkdirAll creates a directory and its missing parents. A directory is
// durable, with its entry in its parent, as soon as it is created. The
// permission bits are ignored.
func (m *Mem) MkdirAll(dir string, _ os.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(OpMkdir, dir); err != nil {
		return err
	}
	nd := m.mu.root
	for _, p := range splitPath(dir) {
		child := nd.entries[p]
		if child == nil {
			child = newDirNode()
			nd.entries[p] = child
			nd.durable[p] = child
		}
		if !child.isDir {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		nd = child
	}
	return nil
}

// lookupDirLocked returns the directory named dir.
func (m *Mem) lookupDirLocked(op, dir string) (*memNode, error) {
	nd, err := m.walkLocked(splitPath(dir))
	if err == nil && !nd.isDir {
		err = syscall.ENOTDIR
	}
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: dir, Err: err}
	}
	return nd, nil
}

// ReadDir returns the sorted names of the current entries of a directory.
func (m *Mem) ReadDir(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(OpReadDir, dir); err != nil {
		return nil, err
	}
	nd, err := m.lookupDirLocked("open", dir)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(nd.entries)), nil
}

// Stat returns the current size of a file and whether it is a directory.
func (m *Mem) Stat(name string) (FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(OpStat, name); err != nil {
		return FileInfo{}, err
	}
	nd, err := m.walkLocked(splitPath(name))
	if err != nil {
		return FileInfo{}, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return FileInfo{Size: int64(len(nd.data)), IsDir: nd.isDir}, nil
}

// SyncDir makes the directory's current entries its durable ones.
func (m *Mem) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(OpSyncDir, dir); err != nil {
		return err
	}
	nd, err := m.lookupDirLocked("open", dir)
	if err != nil {
		return err
	}
	nd.durable = maps.Clone(nd.entries)
	return nil
}
