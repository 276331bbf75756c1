package vfs

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// create creates name on m with data, syncing the file if syncFile and its
// directory dir if syncDir.
func create(t *testing.T, m *Mem, name, data string, syncFile, syncDir bool) File {
	t.Helper()
	f, err := m.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(data), 0)
	require.NoError(t, err)
	if syncFile {
		require.NoError(t, f.Sync())
	}
	if syncDir {
		require.NoError(t, m.SyncDir("/d"))
	}
	return f
}

// contents returns the contents of name, or "<missing>".
func contents(t *testing.T, fsys FS, name string) string {
	t.Helper()
	if _, err := fsys.Stat(name); err != nil {
		require.ErrorIs(t, err, os.ErrNotExist)
		return "<missing>"
	}
	return string(readFile(t, fsys, name))
}

func TestMemCrash(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, m *Mem) // on a Mem with the durable directory /d
		want map[string]string          // path: contents after the crash
	}{
		{
			name: "synced write kept",
			run:  func(t *testing.T, m *Mem) { create(t, m, "/d/f", "data", true, true) },
			want: map[string]string{"/d/f": "data"},
		},
		{
			name: "unsynced write lost",
			run: func(t *testing.T, m *Mem) {
				f := create(t, m, "/d/f", "old", true, true)
				_, err := f.WriteAt([]byte("new and longer"), 0)
				require.NoError(t, err)
			},
			want: map[string]string{"/d/f": "old"},
		},
		{
			name: "file synced but not its directory",
			run:  func(t *testing.T, m *Mem) { create(t, m, "/d/f", "data", true, false) },
			want: map[string]string{"/d/f": "<missing>"},
		},
		{
			name: "directory synced but not the file",
			run:  func(t *testing.T, m *Mem) { create(t, m, "/d/f", "data", false, true) },
			want: map[string]string{"/d/f": ""},
		},
		{
			name: "unsynced truncate lost",
			run: func(t *testing.T, m *Mem) {
				f := create(t, m, "/d/f", "data", true, true)
				require.NoError(t, f.Truncate(1))
			},
			want: map[string]string{"/d/f": "data"},
		},
		{
			name: "rename not synced",
			run: func(t *testing.T, m *Mem) {
				create(t, m, "/d/tmp", "new", true, true)
				require.NoError(t, m.Rename("/d/tmp", "/d/final"))
			},
			want: map[string]string{"/d/tmp": "new", "/d/final": "<missing>"},
		},
		{
			name: "rename synced",
			run: func(t *testing.T, m *Mem) {
				create(t, m, "/d/tmp", "new", true, true)
				require.NoError(t, m.Rename("/d/tmp", "/d/final"))
				require.NoError(t, m.SyncDir("/d"))
			},
			want: map[string]string{"/d/tmp": "<missing>", "/d/final": "new"},
		},
		{
			name: "replacing rename not synced",
			run: func(t *testing.T, m *Mem) {
				create(t, m, "/d/final", "old", true, true)
				create(t, m, "/d/tmp", "new", true, false)
				require.NoError(t, m.Rename("/d/tmp", "/d/final"))
			},
			want: map[string]string{"/d/tmp": "<missing>", "/d/final": "old"},
		},
		{
			name: "rename across directories synced only at the target",
			run: func(t *testing.T, m *Mem) {
				create(t, m, "/d/f", "data", true, true)
				require.NoError(t, m.MkdirAll("/e", 0o755))
				require.NoError(t, m.Rename("/d/f", "/e/f"))
				require.NoError(t, m.SyncDir("/e"))
			},
			want: map[string]string{"/d/f": "data", "/e/f": "data"},
		},
		{
			name: "remove not synced",
			run: func(t *testing.T, m *Mem) {
				create(t, m, "/d/f", "data", true, true)
				require.NoError(t, m.Remove("/d/f"))
			},
			want: map[string]string{"/d/f": "data"},
		},
		{
			name: "remove synced",
			run: func(t *testing.T, m *Mem) {
				create(t, m, "/d/f", "data", true, true)
				require.NoError(t, m.Remove("/d/f"))
				require.NoError(t, m.SyncDir("/d"))
			},
			want: map[string]string{"/d/f": "<missing>"},
		},
		{
			name: "remove all not synced",
			run: func(t *testing.T, m *Mem) {
				require.NoError(t, m.MkdirAll("/d/sub", 0o755))
				f, err := m.OpenFile("/d/sub/f", os.O_RDWR|os.O_CREATE, 0o644)
				require.NoError(t, err)
				_, err = f.WriteAt([]byte("data"), 0)
				require.NoError(t, err)
				require.NoError(t, f.Sync())
				require.NoError(t, m.SyncDir("/d/sub"))
				require.NoError(t, m.RemoveAll("/d/sub"))
			},
			want: map[string]string{"/d/sub/f": "data"},
		},
		{
			name: "directories durable once made",
			run:  func(t *testing.T, m *Mem) { require.NoError(t, m.MkdirAll("/d/a/b", 0o755)) },
			want: map[string]string{"/d/a/b/x": "<missing>"},
		},
		{
			name: "synced mapping kept",
			run: func(t *testing.T, m *Mem) {
				f := create(t, m, "/d/f", "........", true, true)
				b, err := f.Map(8)
				require.NoError(t, err)
				copy(b, "mapped")
				require.NoError(t, f.SyncMap(b))
				copy(b, "MAP") // not synced
				require.NoError(t, f.Unmap(b))
			},
			want: map[string]string{"/d/f": "mapped.."},
		},
		{
			name: "unsynced mapping lost",
			run: func(t *testing.T, m *Mem) {
				f := create(t, m, "/d/f", "........", true, true)
				b, err := f.Map(8)
				require.NoError(t, err)
				copy(b, "mapped")
			},
			want: map[string]string{"/d/f": "........"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMem()
			require.NoError(t, m.MkdirAll("/d", 0o755))
			tt.run(t, m)
			c := m.Crash()
			for name, want := range tt.want {
				require.Equal(t, want, contents(t, c, name), name)
			}
			checkUsage(t, c)
		})
	}
}

func TestMemCrashedIsDead(t *testing.T) {
	m := NewMem()
	f := create(t, m, "/f", "data", true, false)
	b, err := f.Map(4)
	require.NoError(t, err)
	c := m.Crash()

	_, err = m.OpenFile("/f", os.O_RDWR, 0)
	require.ErrorIs(t, err, ErrCrashed)
	_, err = m.Stat("/f")
	require.ErrorIs(t, err, ErrCrashed)
	_, err = m.ReadDir("/")
	require.ErrorIs(t, err, ErrCrashed)
	require.ErrorIs(t, m.MkdirAll("/x", 0o755), ErrCrashed)
	require.ErrorIs(t, m.SyncDir("/"), ErrCrashed)
	require.ErrorIs(t, m.Rename("/f", "/g"), ErrCrashed)
	require.ErrorIs(t, m.Remove("/f"), ErrCrashed)
	require.ErrorIs(t, m.RemoveAll("/f"), ErrCrashed)

	_, err = f.ReadAt(make([]byte, 1), 0)
	require.ErrorIs(t, err, ErrCrashed)
	_, err = f.WriteAt([]byte("x"), 0)
	require.ErrorIs(t, err, ErrCrashed)
	_, err = f.Size()
	require.ErrorIs(t, err, ErrCrashed)
	_, err = f.Map(4)
	require.ErrorIs(t, err, ErrCrashed)
	require.ErrorIs(t, f.Truncate(0), ErrCrashed)
	require.ErrorIs(t, f.Sync(), ErrCrashed)
	require.ErrorIs(t, f.SyncMap(b), ErrCrashed)
	require.ErrorIs(t, f.Unmap(b), ErrCrashed)
	require.ErrorIs(t, f.Close(), ErrCrashed)

	// The dead mapping no longer reaches any file; the new Mem works.
	copy(b, "DEAD")
	names, err := c.ReadDir("/")
	require.NoError(t, err)
	require.Empty(t, names, "the root was never synced")
	require.NoError(t, c.MkdirAll("/x", 0o755))
}

func TestMemCrashKeepingPrefix(t *testing.T) {
	const durable, tail = "durable|", "0123456789abcdefghij"
	lengths := map[int]bool{}
	for seed := range uint64(64) {
		m := NewMem()
		appended := create(t, m, "/appended", durable, true, false)
		_, err := appended.WriteAt([]byte(tail), int64(len(durable)))
		require.NoError(t, err)
		overwritten := create(t, m, "/overwritten", durable, true, false)
		_, err = overwritten.WriteAt([]byte("OVERWRITTEN|"+tail), 0)
		require.NoError(t, err)
		require.NoError(t, m.SyncDir("/"))

		c := m.CrashKeepingPrefix(rand.New(rand.NewPCG(seed, 0)))
		got := contents(t, c, "/appended")
		require.True(t, len(got) >= len(durable), got)
		require.Equal(t, (durable + tail)[:len(got)], got)
		lengths[len(got)] = true
		over := contents(t, c, "/overwritten")
		newer := "OVERWRITTEN|" + tail
		cut := 0
		for cut < len(over) && cut < len(newer) && over[cut] == newer[cut] {
			cut++
		}
		if cut < len(durable) {
			require.Equal(t, newer[:cut]+durable[cut:], over, "an overwrite survives up to a byte, the old bytes after it")
		} else {
			require.Equal(t, newer[:len(over)], over)
		}
		checkUsage(t, c)

		// The same seed tears the same way.
		again := m.CrashKeepingPrefix(rand.New(rand.NewPCG(seed, 0)))
		require.Equal(t, got, contents(t, again, "/appended"))
	}
	require.Greater(t, len(lengths), 5, "tails should be torn at varied lengths")
}

// TestMemCrashAtEveryStep shows the crash-at-every-k-th-step pattern on the
// replace-by-rename protocol: whatever step fails, the file reads as wholly
// old or wholly new after the crash.
func TestMemCrashAtEveryStep(t *testing.T) {
	const oldData, newData = "old checkpoint", "new checkpoint, longer"
	setup := func() *Mem {
		m := NewMem()
		require.NoError(t, m.MkdirAll("/d", 0o755))
		create(t, m, "/d/checkpoint", oldData, true, true)
		return m
	}
	replace := func(m *Mem) error {
		f, err := m.OpenFile("/d/checkpoint.tmp", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte(newData), 0); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		if err := m.Rename("/d/checkpoint.tmp", "/d/checkpoint"); err != nil {
			return err
		}
		return m.SyncDir("/d")
	}

	m := setup()
	before := m.Ops()
	require.NoError(t, replace(m))
	steps := m.Ops() - before
	require.Equal(t, 5, steps) // create, write, sync, rename, syncdir

	for k := range steps + 1 {
		m := setup()
		m.SetInjector(FailAfter(k))
		err := replace(m)
		if k < steps {
			require.ErrorIs(t, err, ErrInjected, "k=%d", k)
		} else {
			require.NoError(t, err)
		}
		for seed := range uint64(4) {
			c := m.CrashKeepingPrefix(rand.New(rand.NewPCG(seed, uint64(k))))
			got := contents(t, c, "/d/checkpoint")
			require.Contains(t, []string{oldData, newData}, got, "k=%d", k)
			if k == steps {
				require.Equal(t, newData, got)
			}
		}
	}
}

// checkUsage checks m's running disk usage against a walk of its namespace.
func checkUsage(t *testing.T, m *Mem) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[*memNode]bool{}
	var total int64
	var walk func(nd *memNode)
	walk = func(nd *memNode) {
		for _, child := range nd.entries {
			switch {
			case child.isDir:
				walk(child)
			case !seen[child]:
				seen[child] = true
				total += int64(len(child.data))
			}
		}
	}
	walk(m.mu.root)
	require.Equal(t, total, m.mu.used)
}

func TestMemUsage(t *testing.T) {
	m := NewMem()
	require.NoError(t, m.MkdirAll("/a/b", 0o755))
	f := create(t, m, "/a/b/f", "0123456789", false, false)
	create(t, m, "/a/g", "01234", false, false)
	require.Equal(t, int64(15), m.DiskUsage())
	require.NoError(t, f.Truncate(20))
	require.Equal(t, int64(25), m.DiskUsage())
	require.NoError(t, m.Rename("/a/g", "/a/b/f")) // replaces f
	require.Equal(t, int64(5), m.DiskUsage())
	_, err := f.WriteAt(bytes.Repeat([]byte("x"), 100), 0) // unlinked: counts for nothing
	require.NoError(t, err)
	require.Equal(t, int64(5), m.DiskUsage())
	create(t, m, "/a/h", "012", false, false)
	checkUsage(t, m)
	require.NoError(t, m.RemoveAll("/a"))
	require.Zero(t, m.DiskUsage())
	checkUsage(t, m)
}

// TestMemCrashKeepingPages: each unsynced page survives or not on its own,
// and the size is the durable one or the current one.
func TestMemCrashKeepingPages(t *testing.T) {
	const page = 4096
	old := bytes.Repeat([]byte("A"), 2*page)
	seen := map[string]bool{}
	for seed := range uint64(64) {
		m := NewMem()
		f := create(t, m, "/f", string(old), true, false)
		require.NoError(t, m.SyncDir("/"))
		_, err := f.WriteAt(bytes.Repeat([]byte("B"), 3*page), page/2) // pages 0–3, page 3 new
		require.NoError(t, err)
		c := m.CrashKeepingPages(rand.New(rand.NewPCG(seed, 7)))
		got := []byte(contents(t, c, "/f"))
		require.Contains(t, []int{2 * page, page/2 + 3*page}, len(got))
		var shape []byte
		for p := 0; p < len(got); p += page {
			pg := got[p:min(len(got), p+page)]
			switch {
			case p < len(old) && bytes.Equal(pg, old[p:min(len(old), p+len(pg))]):
				shape = append(shape, 'o')
			case p >= len(old) && bytes.Equal(pg, make([]byte, len(pg))):
				shape = append(shape, 'z') // grown, but the page not written back
			default:
				want := make([]byte, len(pg)) // the page as written: A before the write, B in it
				for i := range want {
					if at := p + i; at >= page/2 && at < page/2+3*page {
						want[i] = 'B'
					} else {
						want[i] = 'A'
					}
				}
				require.Equal(t, string(want), string(pg), "seed %d page %d", seed, p/page)
				shape = append(shape, 'n')
			}
		}
		seen[string(shape)] = true
		checkUsage(t, c)
	}
	require.Greater(t, len(seen), 6, "pages survive in varied combinations: %v", seen)
}
