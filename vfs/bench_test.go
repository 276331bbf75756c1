package vfs

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkOpenFile opens a file of the OS read-write as a segment's open
// does, asks its size, maps 10 MiB of it (an index's mapping), unmaps it
// and closes it.
func BenchmarkOpenFile(b *testing.B) {
	name := filepath.Join(b.TempDir(), "f")
	writeFile(b, OS, name, make([]byte, 4096))
	b.ReportAllocs()
	for b.Loop() {
		f, err := OS.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Size(); err != nil {
			b.Fatal(err)
		}
		m, err := f.Map(10 << 20)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Unmap(m); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
