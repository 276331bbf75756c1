package strata

import "github.com/stratalog/strata/partition"

// Stats are the store's figures, per partition, for a service to export.
type Stats struct {
	Topics map[string][]PartitionStats
}

// PartitionStats are one partition's figures since the store opened (the
// counters) and now (segments, bytes, offsets).
type PartitionStats struct {
	Appends         int64 // successful append calls (each one batch)
	AppendedRecords int64
	AppendedBytes   int64
	Reads           int64 // batch reads that returned data
	ReadBytes       int64
	Fsyncs          int64
	Rolls           int64
	Segments        int
	Bytes           int64 // bytes of .log files
	StartOffset     int64
	EndOffset       int64 // end of what readers see (see ListOffsets)
}

// Stats returns every partition's figures.
func (s *Store) Stats() Stats {
	s.maybeRefreshTopics()
	out := Stats{Topics: map[string][]PartitionStats{}}
	for name, t := range *s.topics.Load() {
		for _, p := range t.Partitions() {
			out.Topics[name] = append(out.Topics[name], partitionStats(p))
		}
	}
	return out
}

func partitionStats(p *partition.Partition) PartitionStats {
	st := p.Stats()
	return PartitionStats{
		Appends:         st.Appends,
		AppendedRecords: st.AppendedRecords,
		AppendedBytes:   st.AppendedBytes,
		Reads:           st.Reads,
		ReadBytes:       st.ReadBytes,
		Fsyncs:          st.Fsyncs,
		Rolls:           st.Rolls,
		Segments:        st.Segments,
		Bytes:           st.Bytes,
		StartOffset:     p.StartOffset(),
		EndOffset:       p.HighWatermark(),
	}
}
