package index_test

import (
	"fmt"

	"github.com/stratalog/strata/index"
	"github.com/stratalog/strata/vfs"
)

// A segment whose base offset is 100 indexes the batches it appends; a read
// of offset 150 starts scanning the log at the position of the entry below.
func ExampleOffset() {
	fsys := vfs.NewMem()
	x, err := index.OpenOffset(fsys, "00000000000000000100.index", 100, 0, true)
	if err != nil {
		panic(err)
	}
	defer x.Close()

	_ = x.Append(120, 4200) // the batch ending at offset 120 starts at byte 4200
	_ = x.Append(180, 9000)

	fmt.Println(x.Lookup(150))
	fmt.Println(x.Lookup(110)) // before the first entry: the segment's start
	// Output:
	// 120 4200
	// 100 0
}

// The time index answers "from which offset on may records be newer than
// ts?"; the last slot is kept for the entry appended when the segment rolls.
func ExampleTime() {
	fsys := vfs.NewMem()
	x, err := index.OpenTime(fsys, "00000000000000000100.timeindex", 100, 3*index.TimeEntrySize, true)
	if err != nil {
		panic(err)
	}
	defer x.Close()

	_ = x.MaybeAppend(1_000, 120, false)
	_ = x.MaybeAppend(1_000, 150, false) // not a new max timestamp: ignored
	_ = x.MaybeAppend(2_000, 180, false)
	fmt.Println(x.Full(), x.MaybeAppend(3_000, 200, false) != nil)
	fmt.Println(x.MaybeAppend(3_000, 200, true)) // the roll entry
	fmt.Println(x.Lookup(2_500))
	fmt.Println(x.Lookup(999))
	// Output:
	// true true
	// <nil>
	// 2000 180
	// -1 100
}

// Reopening a segment that was not cleanly closed: its preallocated index
// reads as full of zero entries, which Check refuses; the caller resets it
// and rebuilds it from the log.
func ExampleOffset_Check() {
	fsys := vfs.NewMem()
	x, _ := index.OpenOffset(fsys, "0.index", 0, 64, true)
	_ = x.Append(10, 4096)
	_ = x.Sync()
	_ = fsys.SyncDir("/")   // the new file's name is durable too
	crashed := fsys.Crash() // x is never closed, so never trimmed

	y, _ := index.OpenOffset(crashed, "0.index", 0, 64, true)
	defer y.Close()
	fmt.Println(y.Entries(), y.Check())
	y.Reset()
	fmt.Println(y.Entries(), y.Check())
	// Output:
	// 8 index: corrupt file 0.index at entry 1 (byte 8): offset 0 not above the previous entry's 10
	// 0 <nil>
}
