package segment

import "github.com/stratalog/strata/vfs"

// releaseChunk is the unit in which a segment releases the pages its
// appends wrote through the mapping: each time the appends reach the end
// of a chunk, the chunks before the previous one are released, so that the
// last 8 to 16 MiB written, which tailing readers read, stay mapped.
const releaseChunk = 8 << 20

// releaseBehind releases (vfs.ReleaseMap) the pages of the mapping that
// appends copied into it, up to the chunk before the one that the append
// ending at end reached. Unmapping pays for each page written through the
// mapping (several milliseconds per hundred MiB, in Close), releasing them
// as the appends go pays the same once and early; the data stays in the
// file, and a read of a released page faults it in from the page cache.
func (s *Segment) releaseBehind(end int64) {
	upTo := (end/releaseChunk - 1) * releaseChunk
	if s.heap || upTo <= s.released {
		return
	}
	vfs.ReleaseMap(s.log, s.data[s.released:upTo])
	s.released = upTo
}
