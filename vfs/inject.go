package vfs

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
)

// Op names a kind of file-system operation of a [Mem], for injectors and
// operation counts.
type Op uint8

// The operations a [Mem] counts and asks its injector about.
const (
	OpOpen     Op = iota // FS.OpenFile without os.O_CREATE
	OpCreate             // FS.OpenFile with os.O_CREATE (whether or not the file exists)
	OpRead               // File.ReadAt
	OpWrite              // File.WriteAt
	OpSync               // File.Sync
	OpSyncDir            // FS.SyncDir
	OpTruncate           // File.Truncate
	OpRename             // FS.Rename (the path is the new name)
	OpRemove             // FS.Remove and FS.RemoveAll
	OpMap                // File.Map
	OpSyncMap            // File.SyncMap
	OpMkdir              // FS.MkdirAll
	OpReadDir            // FS.ReadDir
	OpStat               // FS.Stat and File.Size
	OpAllocate           // File.Allocate and File.AllocateRange
	OpWriteMap           // File.WriteMap

	numOps = iota
)

var opNames = [numOps]string{
	OpOpen:     "open",
	OpCreate:   "create",
	OpRead:     "read",
	OpWrite:    "write",
	OpSync:     "sync",
	OpSyncDir:  "syncdir",
	OpTruncate: "truncate",
	OpRename:   "rename",
	OpRemove:   "remove",
	OpMap:      "map",
	OpSyncMap:  "syncmap",
	OpMkdir:    "mkdir",
	OpReadDir:  "readdir",
	OpStat:     "stat",
	OpAllocate: "allocate",
	OpWriteMap: "writemap",
}

// String returns the operation's lower-case name, such as "write".
func (op Op) String() string {
	if int(op) < len(opNames) {
		return opNames[op]
	}
	return fmt.Sprintf("Op(%d)", uint8(op))
}

// An Injector decides whether an operation of a [Mem] fails. The Mem calls it
// before each operation with the operation and the path it concerns (for an
// open file, the name the file was opened with); a non-nil error makes the
// operation fail with that error, wrapped in an *fs.PathError, and without
// effect — except File.WriteAt, which then writes the first half of its bytes
// (len(p)/2, a torn write) before failing, as a full disk or a power cut may
// leave it.
//
// The Mem calls its injector with its lock held: an injector must not call the
// Mem. The injectors of this package are safe for concurrent use.
type Injector func(op Op, path string) error

// FailAfter returns an Injector that lets the first n operations among ops
// succeed and fails each later one with [ErrInjected]: FailAfter(0, OpWrite)
// fails every write, FailAfter(3, OpWrite, OpSync) fails the fourth write or
// sync and all that follow. With no ops, it counts every operation.
//
// Crash tests use it to fail at every k-th step in turn: count the operations
// of a run with [Mem.Count], then for each k below that count run again on a
// fresh Mem with FailAfter(k, ...), crash it, and check recovery.
func FailAfter(n int, ops ...Op) Injector {
	var seen atomic.Int64
	return func(op Op, _ string) error {
		if len(ops) > 0 && !slices.Contains(ops, op) {
			return nil
		}
		if seen.Add(1) > int64(n) {
			return ErrInjected
		}
		return nil
	}
}

// FailOnce returns an Injector that fails, with [ErrInjected], the first
// operation op on a path ending in pathSuffix, and nothing else.
func FailOnce(op Op, pathSuffix string) Injector {
	var done atomic.Bool
	return func(o Op, path string) error {
		if o != op || !strings.HasSuffix(path, pathSuffix) {
			return nil
		}
		if done.CompareAndSwap(false, true) {
			return ErrInjected
		}
		return nil
	}
}

// SetInjector installs fn to run before every later operation of m; nil
// removes it. See [Injector].
func (m *Mem) SetInjector(fn Injector) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.injector = fn
}

// SetDiskLimit makes m behave like a disk of limit bytes: a File.WriteAt that
// would take the total size of m's files past limit writes the bytes that fit
// and fails with an error wrapping syscall.ENOSPC; a File.Truncate that would
// grow past it fails with no effect (Mem counts every file at its full size,
// never sparse). A negative limit, the default, removes the limit. Files that
// are removed but still open count for nothing.
func (m *Mem) SetDiskLimit(limit int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.limit = limit
}

// DiskUsage returns the total size of the files in m's current namespace, the
// quantity that [Mem.SetDiskLimit] bounds.
func (m *Mem) DiskUsage() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.used
}

// Ops returns how many operations m has counted, of every kind. Operations are
// counted when they reach the injector, whether it fails them or not; those
// rejected earlier (on a closed file or a crashed Mem) are not counted.
func (m *Mem) Ops() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	total := 0
	for _, n := range m.mu.counts {
		total += n
	}
	return total
}

// Count returns how many operations of kind op m has counted (see [Mem.Ops]).
func (m *Mem) Count(op Op) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if int(op) >= len(m.mu.counts) {
		return 0
	}
	return m.mu.counts[op]
}
