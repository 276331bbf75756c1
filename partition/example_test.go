package partition_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/vfs"
)

// A partition opened on its own, on the operating system's file system,
// and read with a Reader: records in offset order straight from the
// segment's memory mapping, then a lookup by offset. This is the read path
// under the store's, without its topics and copies.
func Example() {
	dir, err := os.MkdirTemp("", "partition-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	// clean=false: no clean shutdown to trust, so Open recovers what it
	// finds (here, nothing).
	p, err := partition.Open(vfs.OS, dir, partition.Config{Sync: partition.SyncNever}, false)
	if err != nil {
		panic(err)
	}
	defer p.Close()
	if _, err := p.Append([]log.Record{
		{Key: []byte("a"), Value: []byte("apple")},
		{Key: []byte("b"), Value: []byte("banana")},
		{Key: []byte("c"), Value: []byte("cherry")},
	}); err != nil {
		panic(err)
	}

	r := p.NewReader(0)
	defer r.Close()
	var rec log.Record // reused: its bytes alias the mapping until the next call
	for {
		ok, err := r.Next(&rec)
		if err != nil {
			panic(err)
		}
		if !ok {
			break // the high watermark: NextWait would wait here
		}
		fmt.Printf("%d %s=%s\n", rec.Offset, rec.Key, rec.Value)
	}

	r.SetOffset(1)
	if ok, err := r.Next(&rec); err != nil || !ok {
		panic(err)
	}
	fmt.Printf("lookup: %d %s\n", rec.Offset, rec.Value)
	// Output:
	// 0 a=apple
	// 1 b=banana
	// 2 c=cherry
	// lookup: 1 banana
}

// ReadRecord copies one record into a buffer the caller owns, so the
// record outlives the call; a buffer reused for every lookup keeps them
// from allocating.
func ExamplePartition_ReadRecord() {
	dir, err := os.MkdirTemp("", "partition-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	p, err := partition.Open(vfs.OS, dir, partition.Config{Sync: partition.SyncNever}, false)
	if err != nil {
		panic(err)
	}
	defer p.Close()
	if _, err := p.Append([]log.Record{{Value: []byte("zero")}, {Value: []byte("one")}}); err != nil {
		panic(err)
	}

	buf := make([]byte, 4096)
	var rec log.Record
	if _, err := p.ReadRecord(1, &rec, buf); err != nil {
		panic(err)
	}
	fmt.Printf("%d %s\n", rec.Offset, rec.Value)
	_, err = p.ReadRecord(2, &rec, buf)
	fmt.Println(errors.Is(err, partition.ErrOutOfRange)) // offsets [0, 2) hold records
	// Output:
	// 1 one
	// true
}
