package compaction

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAssess(t *testing.T) {
	now := t0
	ms := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
	// seg is a segment of 10 offsets from base, bytes long, whose records
	// are age old.
	seg := func(base, bytes int64, age time.Duration) SegmentInfo {
		return SegmentInfo{Base: base, Next: base + 10, Bytes: bytes, FirstBatchTimestamp: ms(age), MaxTimestamp: ms(age)}
	}
	active := func(base int64) SegmentInfo {
		return SegmentInfo{Base: base, Next: base, FirstBatchTimestamp: -1, MaxTimestamp: -1}
	}
	three := []SegmentInfo{seg(0, 100, time.Hour), seg(10, 100, time.Hour), seg(20, 100, time.Hour), active(30)}
	tests := []struct {
		name       string
		segs       []SegmentInfo
		firstDirty int64
		cfg        Config
		want       Plan
	}{
		{"no segments", nil, 5, Config{}, Plan{FirstDirty: 5, FirstUncleanable: 5}},
		{"active only", []SegmentInfo{seg(0, 100, 0)}, 0, Config{},
			Plan{FirstDirty: 0, FirstUncleanable: 0}},
		{"all dirty", three, 0, Config{},
			Plan{FirstDirty: 0, FirstUncleanable: 30, CleanableBytes: 300, Ratio: 1, Cleanable: true}},
		{"two thirds dirty", three, 10, Config{},
			Plan{FirstDirty: 10, FirstUncleanable: 30, CleanBytes: 100, CleanableBytes: 200, Ratio: 2.0 / 3, Cleanable: true}},
		{"checkpoint inside a segment counts it dirty", three, 15, Config{},
			Plan{FirstDirty: 15, FirstUncleanable: 30, CleanBytes: 100, CleanableBytes: 200, Ratio: 2.0 / 3, Cleanable: true}},
		{"one third dirty", three, 20, Config{},
			Plan{FirstDirty: 20, FirstUncleanable: 30, CleanBytes: 200, CleanableBytes: 100, Ratio: 1.0 / 3}},
		{"ratio at the threshold is not above it", three, 20, Config{MinCleanableDirtyRatio: 1.0 / 3},
			Plan{FirstDirty: 20, FirstUncleanable: 30, CleanBytes: 200, CleanableBytes: 100, Ratio: 1.0 / 3}},
		{"negative ratio: any dirty byte", three, 20, Config{MinCleanableDirtyRatio: -1},
			Plan{FirstDirty: 20, FirstUncleanable: 30, CleanBytes: 200, CleanableBytes: 100, Ratio: 1.0 / 3, Cleanable: true}},
		{"all clean", three, 30, Config{},
			Plan{FirstDirty: 30, FirstUncleanable: 30, CleanBytes: 300}},
		{"checkpoint below the log resets", three, -4, Config{},
			Plan{FirstDirty: 0, FirstUncleanable: 30, CleanableBytes: 300, Ratio: 1, Cleanable: true}},
		{"checkpoint past the end resets", three, 99, Config{},
			Plan{FirstDirty: 0, FirstUncleanable: 30, CleanableBytes: 300, Ratio: 1, Cleanable: true}},
		{"min lag holds back young segments",
			[]SegmentInfo{seg(0, 100, 3*time.Hour), seg(10, 100, time.Hour), seg(20, 100, 3*time.Hour), active(30)}, 0,
			Config{MinCompactionLag: 2 * time.Hour},
			Plan{FirstDirty: 0, FirstUncleanable: 10, CleanableBytes: 100, Ratio: 1, Cleanable: true}},
		{"min lag: first dirty segment too young",
			[]SegmentInfo{seg(0, 100, 3*time.Hour), seg(10, 100, time.Hour), active(20)}, 10,
			Config{MinCompactionLag: 2 * time.Hour},
			Plan{FirstDirty: 10, FirstUncleanable: 10, CleanBytes: 100}},
		{"min lag: young segment inside", []SegmentInfo{seg(0, 100, time.Hour), active(10)}, 5,
			Config{MinCompactionLag: 2 * time.Hour},
			Plan{FirstDirty: 5, FirstUncleanable: 5}},
		{"max lag forces a low ratio", three, 20, Config{MaxCompactionLag: 30 * time.Minute},
			Plan{FirstDirty: 20, FirstUncleanable: 30, CleanBytes: 200, CleanableBytes: 100, Ratio: 1.0 / 3, Overdue: 30 * time.Minute, Cleanable: true}},
		{"max lag not reached", three, 20, Config{MaxCompactionLag: 2 * time.Hour},
			Plan{FirstDirty: 20, FirstUncleanable: 30, CleanBytes: 200, CleanableBytes: 100, Ratio: 1.0 / 3}},
		{"max lag needs cleanable bytes",
			[]SegmentInfo{seg(0, 100, time.Hour), seg(10, 100, 3*time.Hour), active(20)}, 10,
			Config{MinCompactionLag: 2 * time.Hour, MaxCompactionLag: 30 * time.Minute},
			Plan{FirstDirty: 10, FirstUncleanable: 20, CleanBytes: 100, CleanableBytes: 100, Ratio: 0.5, Overdue: 150 * time.Minute, Cleanable: true}},
		{"max lag: segment without timestamps",
			[]SegmentInfo{seg(0, 100, time.Hour), {Base: 10, Next: 20, Bytes: 50, FirstBatchTimestamp: -1, MaxTimestamp: -1}, active(20)}, 10,
			Config{MaxCompactionLag: time.Minute},
			Plan{FirstDirty: 10, FirstUncleanable: 20, CleanBytes: 100, CleanableBytes: 50, Ratio: 1.0 / 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Assess(tt.segs, tt.firstDirty, now, tt.cfg)
			require.InDelta(t, tt.want.Ratio, got.Ratio, 1e-9)
			got.Ratio = tt.want.Ratio
			require.Equal(t, tt.want, got)
		})
	}
}

func TestGroup(t *testing.T) {
	// seg is a segment of n offsets from base, bytes long, with entries
	// entries in each index.
	seg := func(base, n, bytes int64, entries int) SegmentInfo {
		return SegmentInfo{Base: base, Next: base + n, Bytes: bytes, OffsetIndexEntries: entries, TimeIndexEntries: entries}
	}
	tests := []struct {
		name     string
		segs     []SegmentInfo
		end      int64
		maxBytes int64
		maxIndex int
		want     []Span
	}{
		{"none", nil, 100, 1000, 1200, nil},
		{"all in one", []SegmentInfo{seg(0, 10, 100, 0), seg(10, 10, 100, 0), seg(20, 10, 100, 0)}, 30, 1000, 1200,
			[]Span{{0, 3}}},
		{"by bytes", []SegmentInfo{seg(0, 10, 400, 0), seg(10, 10, 400, 0), seg(20, 10, 400, 0), seg(30, 10, 100, 0)}, 40, 1000, 1200,
			[]Span{{0, 2}, {2, 4}}},
		{"exactly max bytes", []SegmentInfo{seg(0, 10, 500, 0), seg(10, 10, 500, 0), seg(20, 10, 1, 0)}, 30, 1000, 1200,
			[]Span{{0, 2}, {2, 3}}},
		{"oversized segment alone", []SegmentInfo{seg(0, 10, 100, 0), seg(10, 10, 5000, 0), seg(20, 10, 100, 0)}, 30, 1000, 1200,
			[]Span{{0, 1}, {1, 2}, {2, 3}}},
		{"by time-index entries", []SegmentInfo{seg(0, 10, 1, 40), seg(10, 10, 1, 40), seg(20, 10, 1, 40)}, 30, 1000, 1200,
			[]Span{{0, 2}, {2, 3}}},
		{"by offset-index entries", []SegmentInfo{
			{Base: 0, Next: 10, Bytes: 1, OffsetIndexEntries: 80},
			{Base: 10, Next: 20, Bytes: 1, OffsetIndexEntries: 80},
		}, 20, 1000, 1200, []Span{{0, 1}, {1, 2}}},
		{"offsets past int32", []SegmentInfo{seg(0, 10, 1, 0), seg(1<<30, 10, 1, 0), seg(math.MaxInt32, 10, 1, 0), seg(1<<32-20, 10, 1, 0)}, 1 << 33, 1000, 1200,
			[]Span{{0, 2}, {2, 4}}},
		{"last offset exactly int32 away", []SegmentInfo{seg(0, 10, 1, 0), seg(math.MaxInt32-9, 10, 1, 0)}, 1 << 32, 1000, 1200,
			[]Span{{0, 2}}},
		{"empty segment skips the offset check", []SegmentInfo{seg(0, 10, 1, 0), {Base: 1 << 32, Next: 1 << 32}}, 1 << 33, 1000, 1200,
			[]Span{{0, 2}}},
		{"end leaves later segments out", []SegmentInfo{seg(0, 10, 100, 0), seg(10, 10, 100, 0), seg(20, 10, 100, 0)}, 15, 1000, 1200,
			[]Span{{0, 2}}},
		{"end at a base", []SegmentInfo{seg(0, 10, 100, 0), seg(10, 10, 100, 0), seg(20, 10, 100, 0)}, 20, 1000, 1200,
			[]Span{{0, 2}}},
		{"defaults", []SegmentInfo{seg(0, 10, 1<<29, 0), seg(10, 10, 1<<29, 0), seg(20, 10, 1, 0)}, 30, 0, 0,
			[]Span{{0, 2}, {2, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Group(tt.segs, tt.end, tt.maxBytes, tt.maxIndex))
		})
	}
}
