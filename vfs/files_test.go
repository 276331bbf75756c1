package vfs

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteFileAtomic: a crash at any operation of WriteFileAtomic leaves
// the old contents or the new ones, whole, and ReadFile reads them back.
func TestWriteFileAtomic(t *testing.T) {
	for k := 0; ; k++ {
		m := NewMem()
		require.NoError(t, m.MkdirAll("d", 0o755))
		require.NoError(t, WriteFileAtomic(m, "d/f", []byte("old contents")))
		m.SetInjector(FailAfter(k, OpWrite, OpSync, OpRename, OpSyncDir, OpCreate))
		err := WriteFileAtomic(m, "d/f", []byte("new"))
		after := m.Crash()
		got, rerr := ReadFile(after, "d/f")
		require.NoError(t, rerr, "k=%d", k)
		if err == nil {
			require.Equal(t, "new", string(got), "k=%d: a write that returned is durable", k)
			return
		}
		require.Contains(t, []string{"old contents", "new"}, string(got), "k=%d", k)
	}
}

func TestReadFileMissing(t *testing.T) {
	_, err := ReadFile(NewMem(), "nope")
	require.True(t, errors.Is(err, os.ErrNotExist))
}

// TestWriteFileAtomicFailureLeavesNoTemp: a WriteFileAtomic that fails
// before its rename removes its temporary file and leaves the old contents.
func TestWriteFileAtomicFailureLeavesNoTemp(t *testing.T) {
	for _, op := range []Op{OpWrite, OpSync, OpRename} {
		t.Run(op.String(), func(t *testing.T) {
			m := NewMem()
			require.NoError(t, m.MkdirAll("d", 0o755))
			require.NoError(t, WriteFileAtomic(m, "d/f", []byte("old contents")))
			m.SetInjector(FailOnce(op, ""))
			require.ErrorIs(t, WriteFileAtomic(m, "d/f", []byte("new")), ErrInjected)
			m.SetInjector(nil)
			names, err := m.ReadDir("d")
			require.NoError(t, err)
			require.Equal(t, []string{"f"}, names)
			got, err := ReadFile(m, "d/f")
			require.NoError(t, err)
			require.Equal(t, "old contents", string(got))
		})
	}
}
