package vfs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// mappedRSS returns the resident set of the mapping that starts at m's
// first byte, in KiB, from /proc/self/smaps: the pages the mapping's page
// tables hold.
func mappedRSS(t *testing.T, m []byte) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&m[0])))
	sc := bufio.NewScanner(f)
	found := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, start):
			found = true
		case found && strings.HasPrefix(line, "Rss:"):
			kb, err := strconv.Atoi(strings.Fields(line)[1])
			require.NoError(t, err)
			return kb
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("no mapping at %s in /proc/self/smaps", start)
	return 0
}

// TestReleaseMap: releasing the part of an OS file's shared mapping that
// was written through it drops its pages from the mapping (its resident
// set) and keeps every byte written, in the file and through the mapping;
// on a NoSync file too. An in-memory file's mapping is left as it is.
func TestReleaseMap(t *testing.T) {
	const size = 4 << 20
	for _, fsys := range []FS{OS, NoSync(OS)} {
		f, err := fsys.OpenFile(filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(size))
		m, err := f.Map(size)
		require.NoError(t, err)
		want := bytes.Repeat([]byte("0123456789abcdef"), size/16)
		require.NoError(t, f.WriteMap(m, 0, want))
		require.GreaterOrEqual(t, mappedRSS(t, m), size>>10-4, "written pages are mapped")

		ReleaseMap(f, m[:size/2])
		require.LessOrEqual(t, mappedRSS(t, m), size>>11+4, "the released half is no longer mapped")
		got := make([]byte, size)
		_, err = f.ReadAt(got, 0)
		require.NoError(t, err)
		require.Equal(t, want, got, "the file keeps what was written")
		require.Equal(t, want, m, "and the mapping reads it back")
		require.NoError(t, f.Unmap(m))
		require.NoError(t, f.Close())
	}

	mem := NewMem()
	f, err := mem.OpenFile("f", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	m, err := f.Map(1 << 16)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<16))
	require.NoError(t, f.WriteMap(m, 0, []byte("kept")))
	ReleaseMap(f, m)
	require.Equal(t, "kept", string(m[:4]))
	require.NoError(t, f.Close())
}
