package vfs_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/stratalog/strata/vfs"
)

// A write survives a power cut only once both the file and its directory
// entry are synced.
func ExampleMem_Crash() {
	fsys := vfs.NewMem()
	_ = fsys.MkdirAll("/topic-0", 0o755)
	f, _ := fsys.OpenFile("/topic-0/00000000000000000000.log", os.O_RDWR|os.O_CREATE, 0o644)
	_, _ = f.WriteAt([]byte("batch 1"), 0)
	_ = f.Sync()
	_, _ = f.WriteAt([]byte("batch 2"), 7) // never synced

	after := fsys.Crash()
	_, err := after.Stat("/topic-0/00000000000000000000.log")
	fmt.Println("without SyncDir:", errors.Is(err, os.ErrNotExist))

	_, err = f.Size()
	fmt.Println("old file system:", errors.Is(err, vfs.ErrCrashed))

	// Output:
	// without SyncDir: true
	// old file system: true
}

// FailAfter fails an operation, and all that follow, to test what a crash at
// that point leaves.
func ExampleFailAfter() {
	fsys := vfs.NewMem()
	f, _ := fsys.OpenFile("/checkpoint", os.O_RDWR|os.O_CREATE, 0o644)
	fsys.SetInjector(vfs.FailAfter(1, vfs.OpWrite))

	_, err := f.WriteAt([]byte("first"), 0)
	fmt.Println(err)
	n, err := f.WriteAt([]byte("second"), 5)
	fmt.Println(n, err)

	// Output:
	// <nil>
	// 3 write /checkpoint: vfs: injected failure
}

// NoSync drops the fsyncs: what is written is there at once, but nothing
// is durable, so a power cut keeps nothing of it.
func ExampleNoSync() {
	mem := vfs.NewMem()
	fsys := vfs.NoSync(mem)
	_ = vfs.WriteFileAtomic(fsys, "/topics.json", []byte("{}")) // no fsync, no SyncDir

	data, _ := vfs.ReadFile(fsys, "/topics.json")
	fmt.Printf("now: %s, fsyncs: %d\n", data, mem.Count(vfs.OpSync)+mem.Count(vfs.OpSyncDir))
	_, err := mem.Crash().Stat("/topics.json")
	fmt.Println("after a power cut, gone:", errors.Is(err, os.ErrNotExist))

	// Output:
	// now: {}, fsyncs: 0
	// after a power cut, gone: true
}

// A store takes its directory lock, and counts its open files against the
// process's limit, only where the files are the operating system's.
func ExampleIsOS() {
	fmt.Println("OS:", vfs.IsOS(vfs.OS))
	fmt.Println("NoSync(OS):", vfs.IsOS(vfs.NoSync(vfs.OS)))
	fmt.Println("Mem:", vfs.IsOS(vfs.NewMem()))
	fmt.Println("NoSync(Mem):", vfs.IsOS(vfs.NoSync(vfs.NewMem())))

	// Output:
	// OS: true
	// NoSync(OS): true
	// Mem: false
	// NoSync(Mem): false
}
