package compaction

import (
	"time"

	"github.com/stratalog/strata/segment"
)

// SegmentInfo summarises one segment for Assess and Group.
type SegmentInfo struct {
	Base                int64 // base offset
	Next                int64 // offset after the last batch
	Bytes               int64 // size of the .log file
	OffsetIndexEntries  int   // entries in the .index file
	TimeIndexEntries    int   // entries in the .timeindex file
	FirstBatchTimestamp int64 // max timestamp of the first batch (ms), -1 if none
	MaxTimestamp        int64 // largest timestamp (ms), -1 if none
}

// Info summarises s.
func Info(s *segment.Segment) SegmentInfo {
	offsets, times := s.IndexEntries()
	return SegmentInfo{
		Base:                s.Base(),
		Next:                s.NextOffset(),
		Bytes:               s.Size(),
		OffsetIndexEntries:  offsets,
		TimeIndexEntries:    times,
		FirstBatchTimestamp: s.FirstBatchTimestamp(),
		MaxTimestamp:        s.MaxTimestamp(),
	}
}

// Plan is Assess's verdict on a log: whether to clean it and which range.
type Plan struct {
	// FirstDirty is where the dirty section starts: the checkpoint given
	// to Assess, or the log's first offset if that was outside the log.
	FirstDirty int64
	// FirstUncleanable is where the cleanable range ends: the active
	// segment's base offset, or the base of the first segment holding a
	// record younger than MinCompactionLag if that comes first.
	FirstUncleanable int64
	// CleanBytes is the size of the segments before the one holding
	// FirstDirty; CleanableBytes the size of the segments from that one up
	// to FirstUncleanable, as Kafka's LogCleanerManager.cleanableOffsets
	// and calculateCleanableBytes count them.
	CleanBytes, CleanableBytes int64
	// Ratio is CleanableBytes / (CleanBytes + CleanableBytes), 0 when both
	// are 0. Among several cleanable logs, clean the highest ratio first.
	Ratio float64
	// Overdue is how long ago the oldest dirty segment passed
	// MaxCompactionLag (0 if it has not).
	Overdue time.Duration
	// Cleanable reports whether to clean now: CleanableBytes > 0, and Ratio
	// above MinCleanableDirtyRatio or Overdue > 0.
	Cleanable bool
}

// Assess decides, from segs (every segment of a log, oldest first, the last
// one active), the cleaner checkpoint firstDirty and the time now, whether
// the log should be cleaned, as Kafka's LogCleanerManager does
// (core/src/main/scala/kafka/log/LogCleanerManager.scala). The active segment is never cleanable, so a log of one segment
// never is.
func Assess(segs []SegmentInfo, firstDirty int64, now time.Time, cfg Config) Plan {
	cfg = cfg.withDefaults()
	if len(segs) == 0 {
		return Plan{FirstDirty: firstDirty, FirstUncleanable: firstDirty}
	}
	active := len(segs) - 1
	if firstDirty < segs[0].Base || firstDirty > segs[active].Next {
		firstDirty = segs[0].Base
	}
	p := Plan{FirstDirty: firstDirty, FirstUncleanable: segs[active].Base}
	nowMs := now.UnixMilli()

	// The dirty segments: from the one holding firstDirty to the active one.
	dirty := active
	for i := range active {
		if segs[i].Next > firstDirty {
			dirty = i
			break
		}
	}
	uncleanable := active
	if cfg.MinCompactionLag > 0 {
		for i := dirty; i < active; i++ {
			if segs[i].MaxTimestamp > nowMs-cfg.MinCompactionLag.Milliseconds() {
				uncleanable = i
				p.FirstUncleanable = segs[i].Base
				break
			}
		}
	}
	if p.FirstUncleanable < firstDirty {
		p.FirstUncleanable = firstDirty
	}

	for i := range dirty {
		p.CleanBytes += segs[i].Bytes
	}
	for i := dirty; i < uncleanable; i++ {
		p.CleanableBytes += segs[i].Bytes
	}
	if total := p.CleanBytes + p.CleanableBytes; total > 0 {
		p.Ratio = float64(p.CleanableBytes) / float64(total)
	}

	if cfg.MaxCompactionLag > 0 {
		earliest := int64(-1)
		for i := dirty; i < active; i++ {
			if ts := segs[i].FirstBatchTimestamp; ts > 0 && (earliest < 0 || ts < earliest) {
				earliest = ts
			}
		}
		if until := nowMs - cfg.MaxCompactionLag.Milliseconds(); earliest >= 0 && earliest < until {
			p.Overdue = time.Duration(until-earliest) * time.Millisecond
		}
	}
	p.Cleanable = p.CleanableBytes > 0 && (p.Ratio > cfg.MinCleanableDirtyRatio || p.Overdue > 0)
	return p
}
