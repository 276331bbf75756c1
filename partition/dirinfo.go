package partition

import (
	"path/filepath"

	"github.com/stratalog/strata/vfs"
)

// WasCompacted reports whether the partition directory dir holds the
// checkpoint only a compacted partition writes (where its next cleaning
// starts): a store rebuilding its topic registry from its directories
// tells compacted topics by it.
func WasCompacted(fsys vfs.FS, dir string) bool {
	_, err := fsys.Stat(filepath.Join(dir, cleanerOffsetFile))
	return err == nil
}
