package partition

import "sync/atomic"

// counters are the partition's running totals that readers and the
// background flush add to; the appends' own are appendCounters.
type counters struct {
	reads     atomic.Int64
	readBytes atomic.Int64
	fsyncs    atomic.Int64
	rolls     atomic.Int64
}

// appendCounters are the appends' running totals, kept under the
// partition's mu (which every append takes anyway) rather than as atomics
// that each append would pay for.
type appendCounters struct {
	appends, records, bytes int64
}

// Stats are a partition's figures since it was opened, for a service to
// export.
type Stats struct {
	Appends         int64 // batches written (Append, AppendEncoded, AppendRawBatch), fsynced or not
	AppendedRecords int64
	AppendedBytes   int64
	Reads           int64 // ReadBatches calls that returned batches
	ReadBytes       int64
	Fsyncs          int64 // fsyncs of appended data (group commit shares one)
	Rolls           int64
	Segments        int   // segments now
	Bytes           int64 // bytes of .log files now
}

// Stats returns the partition's figures.
func (p *Partition) Stats() Stats {
	if p.cfg.ReadOnly {
		p.refresh()
	}
	p.mu.Lock()
	a := p.mu.appended
	p.mu.Unlock()
	st := p.state.Load()
	s := Stats{
		Appends:         a.appends,
		AppendedRecords: a.records,
		AppendedBytes:   a.bytes,
		Reads:           p.stats.reads.Load(),
		ReadBytes:       p.stats.readBytes.Load(),
		Fsyncs:          p.stats.fsyncs.Load(),
		Rolls:           p.stats.rolls.Load(),
		Segments:        len(st.segs),
	}
	for _, r := range st.segs {
		s.Bytes += r.seg.Size()
	}
	return s
}
