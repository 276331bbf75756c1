package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOSFileIsADescriptor: on Linux a file of OS is a bare descriptor:
// opening and closing one allocates the file and the path's C string only,
// where an *os.File adds its own three allocations and a finalizer.
func TestOSFileIsADescriptor(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	writeFile(t, OS, name, []byte("hello"))
	allocs := testing.AllocsPerRun(100, func() {
		f, err := OS.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	})
	require.LessOrEqual(t, allocs, 2.0)
}

// TestOSFileCloseWaitsForCalls: Close of an OS file while other goroutines
// read, size and sync it never lets a call use a closed descriptor (run
// with -race): each call either works on the file or fails with
// os.ErrClosed.
func TestOSFileCloseWaitsForCalls(t *testing.T) {
	dir := t.TempDir()
	for i := range 50 {
		name := filepath.Join(dir, "f")
		writeFile(t, OS, name, []byte("hello"))
		f, err := OS.OpenFile(name, os.O_RDWR, 0)
		require.NoError(t, err)
		var wg sync.WaitGroup
		errs := make(chan error, 300)
		for range 3 {
			wg.Go(func() {
				for range 100 {
					buf := make([]byte, 5)
					n, err := f.ReadAt(buf, 0)
					if err == nil && string(buf[:n]) != "hello" {
						err = errors.New("read " + string(buf[:n]))
					}
					if err == nil {
						_, err = f.Size()
					}
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		if i%2 == 0 {
			require.NoError(t, f.Close())
		}
		wg.Wait()
		if i%2 != 0 {
			require.NoError(t, f.Close())
		}
		close(errs)
		for err := range errs {
			require.ErrorIs(t, err, os.ErrClosed)
		}
		_, err = f.ReadAt(make([]byte, 1), 0)
		require.ErrorIs(t, err, os.ErrClosed)
	}
}
