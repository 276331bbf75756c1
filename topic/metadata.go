package topic

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratalog/strata/vfs"
)

// MetadataFile is the file in each partition directory that names the
// topic id, in Kafka's format ("version: 0\ntopic_id: <id>"): a Kafka
// broker deletes a partition directory without one as stray.
const MetadataFile = "partition.metadata"

// readMetadata returns the topic id in dir's partition.metadata, the zero
// id if there is no readable one (missing, torn by a crash, damaged).
func readMetadata(fsys vfs.FS, dir string) ID {
	return readMetadataAt(fsys, filepath.Join(dir, MetadataFile))
}

// readMetadataAt is readMetadata of the file at path.
func readMetadataAt(fsys vfs.FS, path string) ID {
	data, err := vfs.ReadFile(fsys, path)
	if err != nil {
		return ID{}
	}
	id, _ := ParseMetadata(data)
	return id
}

// ParseMetadata parses the contents of a partition.metadata file, in
// Kafka's format (PartitionMetadataFile.scala: a "version: 0" line and a
// "topic_id: <base64>" line), and returns the topic id it names; ok is
// false, with the zero id, unless it has both lines and a valid id.
func ParseMetadata(data []byte) (id ID, ok bool) {
	version, haveID := false, false
	for line := range bytes.Lines(data) {
		key, value, found := bytes.Cut(bytes.TrimSpace(line), []byte(":"))
		if !found {
			continue
		}
		switch string(bytes.TrimSpace(key)) {
		case "version":
			version = string(bytes.TrimSpace(value)) == "0"
		case "topic_id":
			var err error
			id, err = ParseID(string(bytes.TrimSpace(value)))
			haveID = err == nil
		}
	}
	if !version || !haveID {
		return ID{}, false
	}
	return id, true
}

// ensureMetadata makes dir's partition.metadata name id, writing the file
// if it names no id or another one, and returns what it named before
// (zero if nothing readable). The store's registry, checksummed and
// fsynced, is the record of the id: this file is a copy for Kafka's tools,
// never fsynced, so a file that a crash tore or a bad sector changed is
// written again. A missing one is created and written in place (a new
// file has no contents a crash could cost); one that is there is replaced
// with a rename. fresh says that the file is not expected to be there (a
// new partition): it is created first, and read only if it was there.
func ensureMetadata(fsys vfs.FS, dir string, id ID, fresh bool) (ID, error) {
	path := filepath.Join(dir, MetadataFile)
	data := func() []byte { return []byte("version: 0\ntopic_id: " + id.String()) }
	if fresh {
		err := writeNew(fsys, path, data())
		if !errors.Is(err, os.ErrExist) {
			if err != nil {
				return ID{}, fmt.Errorf("topic: writing %s: %w", path, err)
			}
			return ID{}, nil
		}
	}
	got := readMetadataAt(fsys, path)
	if got == id {
		return got, nil
	}
	err := writeNew(fsys, path, data())
	if errors.Is(err, os.ErrExist) {
		err = vfs.ReplaceFile(fsys, path, data())
	}
	if err != nil {
		return got, fmt.Errorf("topic: writing %s: %w", path, err)
	}
	return got, nil
}

// writeNew creates the file at path, which must not exist (os.ErrExist),
// and writes data to it; on failure it removes the file.
func writeNew(fsys vfs.FS, path string, data []byte) error {
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = fsys.Remove(path)
	}
	return err
}

// DirID returns the topic id that the partition directory dir records, the
// zero ID if it records none.
func DirID(fsys vfs.FS, dir string) ID { return readMetadata(fsys, dir) }
