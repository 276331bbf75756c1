package strata

// SetOffsetsSegmentBytes sets the segment size of the offsets topics that
// stores create from now on, and returns what restores it: for tests of
// its compaction, which leaves the active segment alone.
func SetOffsetsSegmentBytes(n int64) (restore func()) {
	old := offsetsTopicConfig.SegmentBytes
	offsetsTopicConfig.SegmentBytes = n
	return func() { offsetsTopicConfig.SegmentBytes = old }
}
