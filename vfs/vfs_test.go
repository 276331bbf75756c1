package vfs

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// eachFS runs fn against the OS, in a temporary directory, and against a
// Mem: the two must behave alike.
func eachFS(t *testing.T, fn func(t *testing.T, fsys FS, dir string)) {
	t.Helper()
	t.Run("os", func(t *testing.T) { fn(t, OS, t.TempDir()) })
	t.Run("mem", func(t *testing.T) {
		m := NewMem()
		dir := "/tmp/test"
		require.NoError(t, m.MkdirAll(dir, 0o755))
		fn(t, m, dir)
	})
}

func writeFile(t testing.TB, fsys FS, name string, data []byte) {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	require.NoError(t, err)
	_, err = f.WriteAt(data, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func readFile(t *testing.T, fsys FS, name string) []byte {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	size, err := f.Size()
	require.NoError(t, err)
	data := make([]byte, size)
	_, err = f.ReadAt(data, 0)
	require.NoError(t, err)
	return data
}

func TestOpenFile(t *testing.T) {
	tests := []struct {
		name     string
		path     string // below the test directory, which holds "file" ("hello") and "sub/"
		flag     int
		wantErr  error
		wantSize int64
	}{
		{name: "create new", path: "new", flag: os.O_RDWR | os.O_CREATE, wantSize: 0},
		{name: "create exclusive new", path: "new", flag: os.O_RDWR | os.O_CREATE | os.O_EXCL},
		{name: "create exclusive existing", path: "file", flag: os.O_RDWR | os.O_CREATE | os.O_EXCL, wantErr: os.ErrExist},
		{name: "create existing keeps contents", path: "file", flag: os.O_RDWR | os.O_CREATE, wantSize: 5},
		{name: "open existing read-only", path: "file", flag: os.O_RDONLY, wantSize: 5},
		{name: "open existing truncating", path: "file", flag: os.O_RDWR | os.O_TRUNC, wantSize: 0},
		{name: "open missing", path: "missing", flag: os.O_RDWR, wantErr: os.ErrNotExist},
		{name: "open missing read-only", path: "missing", flag: os.O_RDONLY, wantErr: os.ErrNotExist},
		{name: "create in missing directory", path: "nodir/f", flag: os.O_RDWR | os.O_CREATE, wantErr: os.ErrNotExist},
		{name: "create below a file", path: "file/f", flag: os.O_RDWR | os.O_CREATE, wantErr: syscall.ENOTDIR},
		{name: "open directory read-only", path: "sub", flag: os.O_RDONLY, wantErr: syscall.EISDIR},
		{name: "open directory read-write", path: "sub", flag: os.O_RDWR, wantErr: syscall.EISDIR},
		{name: "create over directory", path: "sub", flag: os.O_RDWR | os.O_CREATE, wantErr: syscall.EISDIR},
	}
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				d := filepath.Join(dir, fmt.Sprint(i))
				require.NoError(t, fsys.MkdirAll(filepath.Join(d, "sub"), 0o755))
				writeFile(t, fsys, filepath.Join(d, "file"), []byte("hello"))

				name := filepath.Join(d, tt.path)
				f, err := fsys.OpenFile(name, tt.flag, 0o644)
				if tt.wantErr != nil {
					require.ErrorIs(t, err, tt.wantErr)
					require.Nil(t, f)
					return
				}
				require.NoError(t, err)
				require.Equal(t, name, f.Name())
				size, err := f.Size()
				require.NoError(t, err)
				require.Equal(t, tt.wantSize, size)
				require.NoError(t, f.Close())
			})
		}
	})
}

func TestReadWriteAt(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		f, err := fsys.OpenFile(filepath.Join(dir, "f"), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		defer func() { require.NoError(t, f.Close()) }()

		for _, w := range []struct {
			off  int64
			data string
		}{{0, "hello"}, {10, "world"}, {3, "LO"}} {
			n, err := f.WriteAt([]byte(w.data), w.off)
			require.NoError(t, err)
			require.Equal(t, len(w.data), n)
		}
		size, err := f.Size()
		require.NoError(t, err)
		require.Equal(t, int64(15), size)

		tests := []struct {
			name    string
			off     int64
			len     int
			want    string
			wantErr error
		}{
			{name: "start", off: 0, len: 5, want: "helLO"},
			{name: "gap is zeros", off: 4, len: 8, want: "O\x00\x00\x00\x00\x00wo"},
			{name: "to the end", off: 10, len: 5, want: "world"},
			{name: "past the end", off: 12, len: 5, want: "rld", wantErr: io.EOF},
			{name: "at the end", off: 15, len: 1, want: "", wantErr: io.EOF},
			{name: "beyond the end", off: 100, len: 1, want: "", wantErr: io.EOF},
			{name: "empty", off: 100, len: 0, want: ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				buf := make([]byte, tt.len)
				n, err := f.ReadAt(buf, tt.off)
				if tt.wantErr != nil {
					require.ErrorIs(t, err, tt.wantErr)
				} else {
					require.NoError(t, err)
				}
				require.Equal(t, tt.want, string(buf[:n]))
			})
		}

		_, err = f.ReadAt(make([]byte, 1), -1)
		require.Error(t, err)
		_, err = f.WriteAt([]byte("x"), -1)
		require.Error(t, err)
		require.NoError(t, f.Sync())
	})
}

func TestAccessModes(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "f")
		writeFile(t, fsys, name, []byte("hello"))

		ro, err := fsys.OpenFile(name, os.O_RDONLY, 0)
		require.NoError(t, err)
		_, err = ro.WriteAt([]byte("x"), 0)
		require.ErrorIs(t, err, syscall.EBADF)
		require.Error(t, ro.Truncate(0))
		_, err = ro.Map(5)
		require.ErrorIs(t, err, syscall.EACCES)
		require.NoError(t, ro.Sync())
		require.NoError(t, ro.Close())

		wo, err := fsys.OpenFile(name, os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = wo.ReadAt(make([]byte, 1), 0)
		require.ErrorIs(t, err, syscall.EBADF)
		_, err = wo.WriteAt([]byte("J"), 0)
		require.NoError(t, err)
		require.NoError(t, wo.Close())
		require.Equal(t, "Jello", string(readFile(t, fsys, name)))
	})
}

func TestClosedFile(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		f, err := fsys.OpenFile(filepath.Join(dir, "f"), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		require.NoError(t, f.Close())

		_, err = f.ReadAt(make([]byte, 1), 0)
		require.ErrorIs(t, err, os.ErrClosed)
		_, err = f.WriteAt([]byte("x"), 0)
		require.ErrorIs(t, err, os.ErrClosed)
		_, err = f.Size()
		require.ErrorIs(t, err, os.ErrClosed)
		_, err = f.Map(0)
		require.ErrorIs(t, err, os.ErrClosed)
		require.ErrorIs(t, f.Truncate(1), os.ErrClosed)
		require.ErrorIs(t, f.Sync(), os.ErrClosed)
		require.ErrorIs(t, f.Close(), os.ErrClosed)
	})
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name string
		size int64
		want string
	}{
		{name: "shrink", size: 2, want: "he"},
		{name: "same", size: 5, want: "hello"},
		{name: "grow with zeros", size: 8, want: "hello\x00\x00\x00"},
		{name: "empty", size: 0, want: ""},
	}
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				name := filepath.Join(dir, tt.name)
				writeFile(t, fsys, name, []byte("hello"))
				f, err := fsys.OpenFile(name, os.O_RDWR, 0)
				require.NoError(t, err)
				require.NoError(t, f.Truncate(tt.size))
				size, err := f.Size()
				require.NoError(t, err)
				require.Equal(t, tt.size, size)
				require.NoError(t, f.Close())
				require.Equal(t, tt.want, string(readFile(t, fsys, name)))
			})
		}
		t.Run("shrink then grow reads zeros", func(t *testing.T) {
			name := filepath.Join(dir, "regrow")
			writeFile(t, fsys, name, []byte("hello"))
			f, err := fsys.OpenFile(name, os.O_RDWR, 0)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(1))
			require.NoError(t, f.Truncate(5))
			require.NoError(t, f.Close())
			require.Equal(t, "h\x00\x00\x00\x00", string(readFile(t, fsys, name)))
		})
	})
}

func TestRename(t *testing.T) {
	tests := []struct {
		name      string
		from, to  string // below the test directory, which holds "a" ("A"), "b" ("B") and "sub/"
		wantErr   error
		wantNames []string
		wantTo    string // contents of to after the rename
	}{
		{name: "new name", from: "a", to: "c", wantNames: []string{"b", "c", "sub"}, wantTo: "A"},
		{name: "replace", from: "a", to: "b", wantNames: []string{"b", "sub"}, wantTo: "A"},
		{name: "into directory", from: "a", to: "sub/a", wantNames: []string{"b", "sub"}, wantTo: "A"},
		{name: "same name", from: "a", to: "a", wantNames: []string{"a", "b", "sub"}, wantTo: "A"},
		{name: "missing", from: "x", to: "c", wantErr: os.ErrNotExist, wantNames: []string{"a", "b", "sub"}},
		{name: "missing target directory", from: "a", to: "nodir/a", wantErr: os.ErrNotExist, wantNames: []string{"a", "b", "sub"}},
		{name: "onto directory", from: "a", to: "sub", wantErr: syscall.EEXIST, wantNames: []string{"a", "b", "sub"}},
		{name: "directory", from: "sub", to: "dir", wantNames: []string{"a", "b", "dir"}},
		{name: "directory into itself", from: "sub", to: "sub/inner", wantErr: syscall.EINVAL, wantNames: []string{"a", "b", "sub"}},
		{name: "directory onto file", from: "sub", to: "a", wantErr: syscall.ENOTDIR, wantNames: []string{"a", "b", "sub"}},
	}
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				d := filepath.Join(dir, fmt.Sprint(i))
				require.NoError(t, fsys.MkdirAll(filepath.Join(d, "sub"), 0o755))
				writeFile(t, fsys, filepath.Join(d, "a"), []byte("A"))
				writeFile(t, fsys, filepath.Join(d, "b"), []byte("B"))

				err := fsys.Rename(filepath.Join(d, tt.from), filepath.Join(d, tt.to))
				if tt.wantErr != nil {
					require.ErrorIs(t, err, tt.wantErr)
				} else {
					require.NoError(t, err)
				}
				names, err := fsys.ReadDir(d)
				require.NoError(t, err)
				require.Equal(t, tt.wantNames, names)
				if tt.wantTo != "" {
					require.Equal(t, tt.wantTo, string(readFile(t, fsys, filepath.Join(d, tt.to))))
				}
			})
		}
	})
}

func TestRemove(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		require.NoError(t, fsys.MkdirAll(filepath.Join(dir, "full", "deep"), 0o755))
		require.NoError(t, fsys.MkdirAll(filepath.Join(dir, "empty"), 0o755))
		writeFile(t, fsys, filepath.Join(dir, "full", "deep", "f"), []byte("x"))
		writeFile(t, fsys, filepath.Join(dir, "f"), []byte("x"))
		writeFile(t, fsys, filepath.Join(dir, "f2"), []byte("x"))

		tests := []struct {
			name    string
			remove  func(string) error
			path    string
			wantErr error
		}{
			{name: "file", remove: fsys.Remove, path: "f"},
			{name: "missing", remove: fsys.Remove, path: "f", wantErr: os.ErrNotExist},
			{name: "empty directory", remove: fsys.Remove, path: "empty"},
			{name: "full directory", remove: fsys.Remove, path: "full", wantErr: syscall.ENOTEMPTY},
			{name: "all of a directory", remove: fsys.RemoveAll, path: "full"},
			{name: "all of nothing", remove: fsys.RemoveAll, path: "full"},
			{name: "all below a file", remove: fsys.RemoveAll, path: "f2/x", wantErr: syscall.ENOTDIR},
			{name: "file by remove all", remove: fsys.RemoveAll, path: "f2"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				name := filepath.Join(dir, tt.path)
				err := tt.remove(name)
				if tt.wantErr != nil {
					require.ErrorIs(t, err, tt.wantErr)
					return
				}
				require.NoError(t, err)
				_, err = fsys.Stat(name)
				require.ErrorIs(t, err, os.ErrNotExist)
			})
		}
		names, err := fsys.ReadDir(dir)
		require.NoError(t, err)
		require.Empty(t, names)
	})
}

func TestReadDirStat(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		for _, name := range []string{"b.log", "a.index", "c.timeindex"} {
			writeFile(t, fsys, filepath.Join(dir, name), []byte(name))
		}
		require.NoError(t, fsys.MkdirAll(filepath.Join(dir, "topic-0"), 0o755))
		require.NoError(t, fsys.MkdirAll(filepath.Join(dir, "topic-0"), 0o755)) // again: no error

		names, err := fsys.ReadDir(dir)
		require.NoError(t, err)
		require.Equal(t, []string{"a.index", "b.log", "c.timeindex", "topic-0"}, names)
		names, err = fsys.ReadDir(filepath.Join(dir, "topic-0"))
		require.NoError(t, err)
		require.Empty(t, names)

		_, err = fsys.ReadDir(filepath.Join(dir, "missing"))
		require.ErrorIs(t, err, os.ErrNotExist)
		_, err = fsys.ReadDir(filepath.Join(dir, "b.log"))
		require.ErrorIs(t, err, syscall.ENOTDIR)

		fi, err := fsys.Stat(filepath.Join(dir, "b.log"))
		require.NoError(t, err)
		require.Equal(t, FileInfo{Size: 5}, fi)
		fi, err = fsys.Stat(filepath.Join(dir, "topic-0"))
		require.NoError(t, err)
		require.True(t, fi.IsDir)
		_, err = fsys.Stat(filepath.Join(dir, "missing"))
		require.ErrorIs(t, err, os.ErrNotExist)

		require.ErrorIs(t, fsys.MkdirAll(filepath.Join(dir, "b.log", "x"), 0o755), syscall.ENOTDIR)
		require.NoError(t, fsys.SyncDir(dir))
		require.ErrorIs(t, fsys.SyncDir(filepath.Join(dir, "missing")), os.ErrNotExist)
		require.ErrorIs(t, fsys.SyncDir(filepath.Join(dir, "b.log")), syscall.ENOTDIR)
	})
}

func TestMap(t *testing.T) {
	const size = 4096
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		f, err := fsys.OpenFile(filepath.Join(dir, "f.index"), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(size))

		m, err := f.Map(size)
		require.NoError(t, err)
		require.Len(t, m, size)
		require.Equal(t, make([]byte, size), m)

		// Through the mapping to ReadAt, and from WriteAt to the mapping.
		copy(m[100:], "hello")
		buf := make([]byte, 5)
		_, err = f.ReadAt(buf, 100)
		require.NoError(t, err)
		require.Equal(t, "hello", string(buf))
		_, err = f.WriteAt([]byte("world"), 200)
		require.NoError(t, err)
		require.Equal(t, "world", string(m[200:205]))

		// A second mapping aliases the first.
		m2, err := f.Map(size / 2)
		require.NoError(t, err)
		require.Equal(t, "hello", string(m2[100:105]))
		require.NoError(t, f.Unmap(m2))

		// Shrinking then growing leaves zeros where the mapping still is.
		m[3000] = 1
		require.NoError(t, f.Truncate(size/2))
		require.NoError(t, f.Truncate(size))
		require.Zero(t, m[3000])

		require.NoError(t, f.SyncMap(m))
		require.NoError(t, f.SyncMap(nil))

		empty, err := f.Map(0)
		require.NoError(t, err)
		require.Nil(t, empty)
		require.ErrorIs(t, f.Unmap(make([]byte, 8)), syscall.EINVAL)

		// Mappings outlive Close.
		require.NoError(t, f.Close())
		copy(m[300:], "after")
		require.NoError(t, f.SyncMap(m))
		require.NoError(t, f.Unmap(m))
		require.NoError(t, f.Unmap(nil))

		data := readFile(t, fsys, filepath.Join(dir, "f.index"))
		require.Equal(t, "hello", string(data[100:105]))
		require.Equal(t, "world", string(data[200:205]))
		require.Equal(t, "after", string(data[300:305]))
	})
}

// TestMapPastEnd maps more than the file holds, reserving room: what the
// file gains later shows in the mapping, as with mmap(2).
func TestMapPastEnd(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		f, err := fsys.OpenFile(filepath.Join(dir, "f.log"), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte("hello"), 100)
		require.NoError(t, err)
		ahead, err := f.Map(1 << 16)
		require.NoError(t, err)
		require.Equal(t, "hello", string(ahead[100:105]))
		_, err = f.WriteAt([]byte("grown"), 40_000)
		require.NoError(t, err)
		require.Equal(t, "grown", string(ahead[40_000:40_005]))
		size, err := f.Size()
		require.NoError(t, err)
		require.Equal(t, int64(40_005), size, "the mapping does not change the file's size")
		require.NoError(t, f.Unmap(ahead))
		require.NoError(t, f.Close())
	})
}

func TestConcurrentReadWrite(t *testing.T) {
	const (
		writers = 4
		chunk   = 512
		rounds  = 50
	)
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		f, err := fsys.OpenFile(filepath.Join(dir, "f"), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		defer func() { require.NoError(t, f.Close()) }()
		require.NoError(t, f.Truncate(writers*chunk))

		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				want := bytes.Repeat([]byte{byte(w + 1)}, chunk)
				got := make([]byte, chunk)
				off := int64(w * chunk)
				for range rounds {
					if _, err := f.WriteAt(want, off); err != nil {
						errs <- err
						return
					}
					if _, err := f.ReadAt(got, off); err != nil {
						errs <- err
						return
					}
					if !bytes.Equal(want, got) {
						errs <- fmt.Errorf("writer %d read back other bytes", w)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	})
}

// TestAllocate grows a file with reserved zeros and never shrinks it.
func TestAllocate(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		f, err := fsys.OpenFile(filepath.Join(dir, "f.log"), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte("head"), 0)
		require.NoError(t, err)
		require.NoError(t, f.Allocate(1<<16))
		size, err := f.Size()
		require.NoError(t, err)
		require.Equal(t, int64(1<<16), size)
		buf := make([]byte, 8)
		_, err = f.ReadAt(buf, 0)
		require.NoError(t, err)
		require.Equal(t, "head\x00\x00\x00\x00", string(buf), "the old bytes stay, the new ones are zeros")
		require.NoError(t, f.Allocate(100), "a smaller size is a no-op")
		size, err = f.Size()
		require.NoError(t, err)
		require.Equal(t, int64(1<<16), size)
		require.NoError(t, f.Close())
	})
}

// TestAllocateRange reserves a range inside a sparse file, which keeps its
// size and its bytes, and a range past its end, which grows it.
func TestAllocateRange(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		f, err := fsys.OpenFile(filepath.Join(dir, "f.index"), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		defer func() { require.NoError(t, f.Close()) }()
		_, err = f.WriteAt([]byte("head"), 0)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(1<<16))
		require.NoError(t, f.AllocateRange(0, 1<<13))
		require.NoError(t, f.AllocateRange(1<<13, 0), "nothing to reserve")
		size, err := f.Size()
		require.NoError(t, err)
		require.Equal(t, int64(1<<16), size, "a range inside the file keeps its size")
		buf := make([]byte, 8)
		_, err = f.ReadAt(buf, 0)
		require.NoError(t, err)
		require.Equal(t, "head\x00\x00\x00\x00", string(buf), "the bytes there stay")

		require.NoError(t, f.AllocateRange(1<<16-100, 200))
		size, err = f.Size()
		require.NoError(t, err)
		require.Equal(t, int64(1<<16+100), size, "a range past the end grows the file")

		require.ErrorIs(t, f.AllocateRange(-1, 10), syscall.EINVAL)
		require.ErrorIs(t, f.AllocateRange(0, -1), syscall.EINVAL)
	})
}

// TestWriteMap writes through a mapping: the bytes are the file's, bad
// bounds are EINVAL, and a write wholly past the end of the file is a
// memory fault returned as ErrFault (SIGBUS on the OS), not a crash.
func TestWriteMap(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		f, err := fsys.OpenFile(filepath.Join(dir, "f.log"), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		require.NoError(t, f.Allocate(1<<14))
		m, err := f.Map(1 << 16)
		require.NoError(t, err)
		require.NoError(t, f.WriteMap(m, 100, []byte("mapped")))
		buf := make([]byte, 6)
		_, err = f.ReadAt(buf, 100)
		require.NoError(t, err)
		require.Equal(t, "mapped", string(buf))

		require.ErrorIs(t, f.WriteMap(m, -1, []byte("x")), syscall.EINVAL)
		require.ErrorIs(t, f.WriteMap(m, 1<<16-1, []byte("xy")), syscall.EINVAL)
		require.ErrorIs(t, f.WriteMap(m, 1<<15, []byte("past the end")), ErrFault)
		require.NoError(t, f.Unmap(m))
		require.NoError(t, f.Close())
	})
}

// TestWriteMapAfterCrash: a mapping of a crashed Mem reaches no file.
func TestWriteMapAfterCrash(t *testing.T) {
	m := NewMem()
	f, err := m.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	require.NoError(t, f.Allocate(100))
	b, err := f.Map(100)
	require.NoError(t, err)
	m.Crash()
	require.ErrorIs(t, f.WriteMap(b, 0, []byte("x")), ErrFault)
	require.ErrorIs(t, f.WriteMap(b, 0, []byte("x")), ErrCrashed)
}
