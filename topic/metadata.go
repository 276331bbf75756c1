package topic

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stratalog/strata/internal/vfs"
)

// MetadataFile is the file in each partition directory that names the
// topic id, in Kafka's format ("version: 0\ntopic_id: <id>"): a Kafka
// broker deletes a partition directory without one as stray.
const MetadataFile = "partition.metadata"

// ErrIDMismatch means a partition directory belongs to another topic of
// the same name: its partition.metadata names another topic id.
var ErrIDMismatch = errors.New("topic: partition directory of another topic id")

// readMetadata returns the topic id in dir's partition.metadata, the zero
// id if there is no readable one (missing, torn by a crash, damaged).
func readMetadata(fsys vfs.FS, dir string) ID {
	data, err := vfs.ReadFile(fsys, filepath.Join(dir, MetadataFile))
	if err != nil {
		return ID{}
	}
	var id ID
	version := false
	for line := range strings.Lines(string(data)) {
		key, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "version":
			version = strings.TrimSpace(value) == "0"
		case "topic_id":
			id, _ = ParseID(strings.TrimSpace(value))
		}
	}
	if !version {
		return ID{}
	}
	return id
}

// ensureMetadata makes dir's partition.metadata name id: it writes the file
// if it has no readable id, and fails with ErrIDMismatch if it names
// another. The file is written with a rename but not fsynced: the store's
// registry is the durable record of the id, and a file a crash tore is
// written again at the next Open.
func ensureMetadata(fsys vfs.FS, dir string, id ID) error {
	switch got := readMetadata(fsys, dir); {
	case got == id:
		return nil
	case !got.IsZero():
		return fmt.Errorf("topic: %s names topic id %s, the topic's id is %s (a directory left by an earlier topic of the name?): %w",
			filepath.Join(dir, MetadataFile), got, id, ErrIDMismatch)
	}
	path := filepath.Join(dir, MetadataFile)
	if err := vfs.ReplaceFile(fsys, path, []byte("version: 0\ntopic_id: "+id.String())); err != nil {
		return fmt.Errorf("topic: writing %s: %w", path, err)
	}
	return nil
}

// DirID returns the topic id that the partition directory dir records, the
// zero ID if it records none.
func DirID(fsys vfs.FS, dir string) ID { return readMetadata(fsys, dir) }
