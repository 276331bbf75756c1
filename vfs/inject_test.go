package vfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFailAfter(t *testing.T) {
	const writes = 5
	tests := []struct {
		name     string
		injector Injector
		wantOK   int // writes that succeed before the first failure
	}{
		{name: "fail from the first", injector: FailAfter(0, OpWrite), wantOK: 0},
		{name: "fail from the third", injector: FailAfter(2, OpWrite), wantOK: 2},
		{name: "fail after the last", injector: FailAfter(writes, OpWrite), wantOK: writes},
		{name: "other ops only", injector: FailAfter(0, OpSync, OpRename), wantOK: writes},
		{name: "every op", injector: FailAfter(3), wantOK: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMem()
			f, err := m.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o644)
			require.NoError(t, err)
			m.SetInjector(tt.injector)
			for i := range writes {
				_, err := f.WriteAt([]byte("ab"), int64(2*i))
				if i < tt.wantOK {
					require.NoError(t, err, "write %d", i)
				} else {
					require.ErrorIs(t, err, ErrInjected, "write %d", i)
				}
			}
			require.Equal(t, writes, m.Count(OpWrite))
		})
	}
}

func TestFailOnce(t *testing.T) {
	m := NewMem()
	m.SetInjector(FailOnce(OpSync, ".log"))
	a, err := m.OpenFile("/0.index", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	b, err := m.OpenFile("/0.log", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)

	require.NoError(t, a.Sync())
	err = b.Sync()
	require.ErrorIs(t, err, ErrInjected)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "/0.log", pe.Path)
	require.NoError(t, b.Sync())

	m.SetInjector(nil)
	require.NoError(t, m.SyncDir("/"))
}

func TestInjectedFailureHasNoEffect(t *testing.T) {
	m := NewMem()
	create(t, m, "/f", "data", true, false)
	m.SetInjector(func(Op, string) error { return syscall.EIO })

	_, err := m.OpenFile("/g", os.O_RDWR|os.O_CREATE, 0o644)
	require.ErrorIs(t, err, syscall.EIO)
	require.ErrorIs(t, m.Rename("/f", "/g"), syscall.EIO)
	require.ErrorIs(t, m.Remove("/f"), syscall.EIO)
	require.ErrorIs(t, m.SyncDir("/"), syscall.EIO)

	m.SetInjector(nil)
	names, err := m.ReadDir("/")
	require.NoError(t, err)
	require.Equal(t, []string{"f"}, names)
	require.Equal(t, "<missing>", contents(t, m.Crash(), "/f"), "the failed SyncDir made nothing durable")
}

func TestTornWrite(t *testing.T) {
	tests := []struct {
		name  string
		write string
		want  string // file contents after the failed write
	}{
		{name: "even", write: "0123456789", want: "01234"},
		{name: "odd", write: "abc", want: "a"},
		{name: "one byte", write: "x", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMem()
			f, err := m.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o644)
			require.NoError(t, err)
			m.SetInjector(FailOnce(OpWrite, ""))
			n, err := f.WriteAt([]byte(tt.write), 0)
			require.ErrorIs(t, err, ErrInjected)
			require.Equal(t, len(tt.write)/2, n)
			require.Equal(t, tt.want, string(readFile(t, m, "/f")))
		})
	}
}

func TestDiskFull(t *testing.T) {
	m := NewMem()
	m.SetDiskLimit(100)
	f, err := m.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)

	n, err := f.WriteAt(make([]byte, 80), 0)
	require.NoError(t, err)
	require.Equal(t, 80, n)

	// Overwriting in place needs no space; growing past the limit writes
	// what fits.
	n, err = f.WriteAt(make([]byte, 40), 70)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Equal(t, 30, n)
	size, err := f.Size()
	require.NoError(t, err)
	require.Equal(t, int64(100), size)
	require.Equal(t, int64(100), m.DiskUsage())

	n, err = f.WriteAt([]byte("x"), 200)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Zero(t, n)
	require.ErrorIs(t, f.Truncate(101), syscall.ENOSPC)

	// Freeing space makes room again; the limit survives a crash.
	require.NoError(t, f.Truncate(50))
	n, err = f.WriteAt(make([]byte, 50), 50)
	require.NoError(t, err)
	require.Equal(t, 50, n)
	require.NoError(t, f.Sync())
	require.NoError(t, m.SyncDir("/"))

	c := m.Crash()
	require.Equal(t, int64(100), c.DiskUsage())
	g, err := c.OpenFile("/g", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = g.WriteAt([]byte("x"), 0)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NoError(t, c.Remove("/f"))
	_, err = g.WriteAt([]byte("x"), 0)
	require.NoError(t, err)

	c.SetDiskLimit(-1)
	_, err = g.WriteAt(make([]byte, 1000), 0)
	require.NoError(t, err)
}

func TestOpCounts(t *testing.T) {
	m := NewMem()
	require.NoError(t, m.MkdirAll("/d", 0o755))
	f, err := m.OpenFile("/d/f", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	for range 3 {
		_, err = f.WriteAt([]byte("x"), 0)
		require.NoError(t, err)
	}
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	_, err = f.WriteAt([]byte("x"), 0) // rejected before counting
	require.ErrorIs(t, err, os.ErrClosed)
	_, err = m.OpenFile("/d/f", os.O_RDONLY, 0)
	require.NoError(t, err)

	want := map[Op]int{OpMkdir: 1, OpCreate: 1, OpWrite: 3, OpSync: 1, OpOpen: 1}
	for op := range Op(numOps) {
		require.Equal(t, want[op], m.Count(op), op.String())
	}
	require.Equal(t, 7, m.Ops())
}

func TestOpString(t *testing.T) {
	seen := map[string]bool{}
	for op := range Op(numOps) {
		s := op.String()
		require.NotEmpty(t, s)
		require.False(t, seen[s], "duplicate name %q", s)
		seen[s] = true
	}
	require.Equal(t, "syncmap", OpSyncMap.String())
	require.Equal(t, "Op(200)", Op(200).String())
}

func TestMemMappedFileCannotGrow(t *testing.T) {
	m := NewMem()
	f, err := m.OpenFile("/f.index", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(64))
	b, err := f.Map(32)
	require.NoError(t, err)

	require.ErrorIs(t, f.Truncate(65), ErrMapped)
	_, err = f.WriteAt([]byte("xx"), 63)
	require.ErrorIs(t, err, ErrMapped)
	// Within the size it had when mapped, all goes.
	require.NoError(t, f.Truncate(16))
	require.NoError(t, f.Truncate(64))
	_, err = f.WriteAt([]byte("x"), 63)
	require.NoError(t, err)

	require.NoError(t, f.Unmap(b))
	require.ErrorIs(t, f.Unmap(b), syscall.EINVAL, "already unmapped")
	require.NoError(t, f.Truncate(128))
	require.True(t, errors.Is(f.SyncMap(b), syscall.EINVAL), "a stale mapping is no mapping")
}
