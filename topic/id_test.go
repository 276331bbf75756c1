package topic

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

func TestNewID(t *testing.T) {
	seen := map[ID]bool{}
	for range 2000 {
		id := NewID()
		require.False(t, id.IsZero())
		require.False(t, seen[id], "ids do not repeat")
		seen[id] = true
		s := id.String()
		require.Len(t, s, 22)
		require.False(t, strings.HasPrefix(s, "-"), "as Kafka's, an id never prints with a leading -")
		require.Equal(t, byte(0x40), id[6]&0xf0, "a version 4 UUID")
		back, err := ParseID(s)
		require.NoError(t, err)
		require.Equal(t, id, back)
	}
}

func TestParseIDRejects(t *testing.T) {
	for _, s := range []string{"", "AAAAAAAAAAAAAAAAAAAAAA", "not base64 at all!!!!!", "AAAA", "AAAAAAAAAAAAAAAAAAAAAAAA"} {
		_, err := ParseID(s)
		require.ErrorIs(t, err, ErrInvalidID, "%q", s)
	}
	// Kafka's own example form: URL-safe characters.
	id, err := ParseID("vAZM_-9oRGmJ6Y8C4Jwu6A")
	require.NoError(t, err)
	require.Equal(t, "vAZM_-9oRGmJ6Y8C4Jwu6A", id.String())
}

func TestPartitionMetadata(t *testing.T) {
	m := vfs.NewMem()
	require.NoError(t, m.MkdirAll("t-0", 0o755))
	require.True(t, DirID(m, "t-0").IsZero(), "no file: no id")
	id := NewID()
	was, err := ensureMetadata(m, "t-0", id, false)
	require.NoError(t, err)
	require.True(t, was.IsZero())
	data, err := vfs.ReadFile(m, "t-0/partition.metadata")
	require.NoError(t, err)
	require.Equal(t, "version: 0\ntopic_id: "+id.String(), string(data), "Kafka's format")
	require.Equal(t, id, DirID(m, "t-0"))
	require.Zero(t, m.Count(vfs.OpRename), "a new file is written in place, without a temporary file")
	was, err = ensureMetadata(m, "t-0", id, false)
	require.NoError(t, err, "the same id again is fine")
	require.Equal(t, id, was)
	other := NewID()
	was, err = ensureMetadata(m, "t-0", other, false)
	require.NoError(t, err, "another id: the registry's wins")
	require.Equal(t, id, was)
	require.Equal(t, other, DirID(m, "t-0"))
	id = other

	// A torn or damaged file names no id, and is written again.
	for _, bad := range []string{"", "version: 0\n", "version: 1\ntopic_id: " + id.String(), "garbage"} {
		f, err := m.OpenFile("t-0/partition.metadata", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte(bad), 0)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.True(t, DirID(m, "t-0").IsZero(), "%q", bad)
		renames := m.Count(vfs.OpRename)
		_, err = ensureMetadata(m, "t-0", id, false)
		require.NoError(t, err)
		require.Equal(t, id, DirID(m, "t-0"))
		require.Equal(t, renames+1, m.Count(vfs.OpRename), "a file that is there is replaced with a rename")
	}
}

// TestPartitionMetadataFresh: a new partition's file is created without a
// read first; one that is there after all is read and replaced as Open
// would.
func TestPartitionMetadataFresh(t *testing.T) {
	m := vfs.NewMem()
	require.NoError(t, m.MkdirAll("t-0", 0o755))
	id := NewID()
	opens := m.Count(vfs.OpOpen)
	was, err := ensureMetadata(m, "t-0", id, true)
	require.NoError(t, err)
	require.True(t, was.IsZero())
	require.Equal(t, opens, m.Count(vfs.OpOpen), "no read before the file's creation")
	require.Equal(t, id, DirID(m, "t-0"))

	other := NewID()
	was, err = ensureMetadata(m, "t-0", other, true)
	require.NoError(t, err)
	require.Equal(t, id, was, "a file that is there is read")
	require.Equal(t, other, DirID(m, "t-0"), "and replaced")
}

// TestPartitionMetadataFailedWrite: a new partition.metadata whose write
// fails is removed, not left torn, and the error is returned.
func TestPartitionMetadataFailedWrite(t *testing.T) {
	m := vfs.NewMem()
	require.NoError(t, m.MkdirAll("t-0", 0o755))
	m.SetInjector(vfs.FailOnce(vfs.OpWrite, MetadataFile))
	_, err := ensureMetadata(m, "t-0", NewID(), false)
	require.ErrorIs(t, err, vfs.ErrInjected)
	_, err = m.Stat("t-0/" + MetadataFile)
	require.ErrorIs(t, err, os.ErrNotExist)
	m.SetInjector(nil)
	id := NewID()
	_, err = ensureMetadata(m, "t-0", id, false)
	require.NoError(t, err)
	require.Equal(t, id, DirID(m, "t-0"))
}

func TestParseMetadata(t *testing.T) {
	id := NewID()
	for _, tc := range []struct {
		name string
		data string
		ok   bool
	}{
		{"kafka's", "version: 0\ntopic_id: " + id.String() + "\n", true},
		{"spaced", "  version : 0 \n topic_id:" + id.String(), true},
		{"empty", "", false},
		{"no version", "topic_id: " + id.String() + "\n", false},
		{"version 1", "version: 1\ntopic_id: " + id.String() + "\n", false},
		{"no id", "version: 0\n", false},
		{"bad id", "version: 0\ntopic_id: !!\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseMetadata([]byte(tc.data))
			require.Equal(t, tc.ok, ok)
			if tc.ok {
				require.Equal(t, id, got)
			} else {
				require.True(t, got.IsZero())
			}
		})
	}
}
