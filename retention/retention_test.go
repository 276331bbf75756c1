package retention

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const day = 24 * 3600 * 1000

func TestDeletable(t *testing.T) {
	now := int64(100 * day)
	week := int64(7 * day)
	seg := func(base, bytes, ts int64) Segment { return Segment{Base: base, Bytes: bytes, MaxTimestamp: ts} }
	timeOnly := Policy{RetentionMs: week, RetentionBytes: -1, DeleteByTimeAndSize: true}
	tests := []struct {
		name   string
		segs   []Segment
		policy Policy
		want   []Reason
	}{
		{"nothing old", []Segment{seg(0, 10, now-day), seg(10, 10, now)}, timeOnly, nil},
		{"oldest expired", []Segment{seg(0, 10, now-8*day), seg(10, 10, now-day), seg(20, 10, now)}, timeOnly, []Reason{Expired}},
		{"strictly older", []Segment{seg(0, 10, now-week), seg(10, 10, now)}, timeOnly, nil},
		{"one millisecond past", []Segment{seg(0, 10, now-week-1), seg(10, 10, now)}, timeOnly, []Reason{Expired}},
		{"stops at the first that stays", []Segment{seg(0, 10, now-9*day), seg(10, 10, now-day), seg(20, 10, now-9*day), seg(30, 10, now)}, timeOnly, []Reason{Expired}},
		{"future segment blocks later ones", []Segment{seg(0, 10, now+365*day), seg(10, 10, now-9*day), seg(20, 5, now)}, timeOnly, nil},
		{"non-empty active may go", []Segment{seg(0, 10, now-9*day), seg(10, 10, now-8*day)}, timeOnly, []Reason{Expired, Expired}},
		{"empty active stays", []Segment{seg(0, 10, now-9*day), seg(10, 0, -1)}, timeOnly, []Reason{Expired}},
		{"forever", []Segment{seg(0, 10, 0), seg(10, 10, 0)}, Policy{RetentionMs: -1, RetentionBytes: -1, DeleteByTimeAndSize: true}, nil},
		{"size: under the limit", []Segment{seg(0, 10, now), seg(10, 10, now)}, Policy{RetentionMs: -1, RetentionBytes: 30, DeleteByTimeAndSize: true}, nil},
		{"size: oldest while at or above the limit", []Segment{seg(0, 10, now), seg(10, 10, now), seg(20, 10, now), seg(30, 5, now)}, Policy{RetentionMs: -1, RetentionBytes: 15, DeleteByTimeAndSize: true}, []Reason{OverSize, OverSize}},
		{"size: never below the limit", []Segment{seg(0, 10, now), seg(10, 10, now)}, Policy{RetentionMs: -1, RetentionBytes: 15, DeleteByTimeAndSize: true}, nil},
		{"size: limit 0 keeps the empty active", []Segment{seg(0, 10, now), seg(10, 0, -1)}, Policy{RetentionMs: -1, RetentionBytes: 0, DeleteByTimeAndSize: true}, []Reason{OverSize}},
		{"start offset: wholly below", []Segment{seg(0, 10, now), seg(10, 10, now), seg(20, 10, now)}, Policy{RetentionMs: -1, RetentionBytes: -1, StartOffset: 20, DeleteByTimeAndSize: true}, []Reason{BelowStartOffset, BelowStartOffset}},
		{"start offset: inside a segment keeps it", []Segment{seg(0, 10, now), seg(10, 10, now)}, Policy{RetentionMs: -1, RetentionBytes: -1, StartOffset: 5, DeleteByTimeAndSize: true}, nil},
		{"start offset: active segment stays", []Segment{seg(0, 10, now), seg(10, 10, now)}, Policy{RetentionMs: -1, RetentionBytes: -1, StartOffset: 15, DeleteByTimeAndSize: true}, []Reason{BelowStartOffset}},
		{"compact only: start offset only", []Segment{seg(0, 10, 0), seg(10, 10, 0), seg(20, 10, now)}, Policy{RetentionMs: week, RetentionBytes: 1, StartOffset: 10}, []Reason{BelowStartOffset}},
		{"all three in order", []Segment{seg(0, 10, now), seg(10, 10, now), seg(20, 10, now-9*day), seg(30, 10, now)}, Policy{RetentionMs: week, RetentionBytes: 20, StartOffset: 10, DeleteByTimeAndSize: true}, []Reason{BelowStartOffset, OverSize, Expired}},
		{"no segments", nil, timeOnly, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Deletable(tt.segs, now, tt.policy))
		})
	}
}

func TestReasonString(t *testing.T) {
	require.Equal(t, "expired", Expired.String())
	require.Equal(t, "over the size limit", OverSize.String())
	require.Equal(t, "below the start offset", BelowStartOffset.String())
	require.Equal(t, "unknown", Reason(0).String())
}

func BenchmarkDeletable(b *testing.B) {
	segs := make([]Segment, 10_000)
	for i := range segs {
		segs[i] = Segment{Base: int64(i) * 1000, Bytes: 1 << 20, MaxTimestamp: int64(i) * 1000}
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Deletable(segs, 20_000_000, Policy{RetentionMs: 5_000_000, RetentionBytes: 1 << 30, DeleteByTimeAndSize: true})
	}
}
