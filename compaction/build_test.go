package compaction

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// controlBatch encodes a control batch holding one commit marker.
func controlBatch(t testing.TB) []byte {
	t.Helper()
	h := log.BatchHeader{
		Attributes: log.AttrControl | log.AttrTransactional, BaseTimestamp: t0.UnixMilli(), MaxTimestamp: t0.UnixMilli(),
		PartitionLeaderEpoch: -1, ProducerID: 7, ProducerEpoch: 0, BaseSequence: -1,
	}
	b, err := log.EncodeBatchWithHeader(nil, h, []log.Record{{
		Timestamp: t0, Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 0},
	}})
	require.NoError(t, err)
	return b
}

func TestBuildMap(t *testing.T) {
	l := newTestLog(t, 4<<10)
	l.write(kv("a", "1"), kv("b", "1")) // 0, 1
	l.write(nokey("x"), kv("a", "2"))   // 2, 3
	l.roll()
	l.appendBatch(controlBatch(t))   // 4
	l.write(kv("c", "1"), tomb("b")) // 5, 6
	l.roll()
	l.write(kv("a", "3"), kv("d", "1")) // 7, 8 (in the active segment)

	tests := []struct {
		name               string
		first, uncleanable int64
		want               map[string]int64
		end                int64
	}{
		{"whole dirty section", 0, 7, map[string]int64{"a": 3, "b": 6, "c": 5}, 7},
		{"from a checkpoint", 3, 7, map[string]int64{"a": 3, "b": 6, "c": 5}, 7},
		{"checkpoint mid-batch", 1, 7, map[string]int64{"a": 3, "b": 6, "c": 5}, 7},
		{"past the control batch", 5, 7, map[string]int64{"b": 6, "c": 5}, 7},
		{"uncleanable mid-batch", 0, 6, map[string]int64{"a": 3, "b": 1, "c": 5}, 6},
		{"into the active segment", 4, 9, map[string]int64{"a": 7, "b": 6, "c": 5, "d": 8}, 9},
		{"nothing dirty", 7, 7, map[string]int64{}, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewOffsetMap(1<<16, nil)
			end, err := BuildMap(m, l.segs, tt.first, tt.uncleanable, 0)
			require.NoError(t, err)
			require.Equal(t, tt.end, end)
			require.Equal(t, len(tt.want), m.Len())
			for k, want := range tt.want {
				off, ok := m.Get([]byte(k))
				require.True(t, ok, k)
				require.Equal(t, want, off, k)
			}
		})
	}
}

func TestBuildMapKeylessSectionAdvances(t *testing.T) {
	l := newTestLog(t, 4<<10)
	l.write(nokey("x"), nokey("y"))
	l.appendBatch(controlBatch(t))
	l.roll()
	m := NewOffsetMap(1<<10, nil)
	end, err := BuildMap(m, l.segs, 0, l.active().Base(), 0)
	require.NoError(t, err)
	require.Equal(t, int64(3), end)
	require.Zero(t, m.Len())
}

// TestBuildMapPartial fills a small map: each pass maps what fits, and the
// next pass continues where it stopped, until the section is mapped.
func TestBuildMapPartial(t *testing.T) {
	l := newTestLog(t, 2<<10)
	const keys = 300
	for i := range keys {
		l.write(kv(fmt.Sprintf("key-%03d", i), "v"), kv(fmt.Sprintf("key-%03d", (i+1)%keys), "w"))
	}
	l.roll()
	uncleanable := l.active().Base()
	m := NewOffsetMap(2<<10, nil) // room for some 50 keys
	first, passes := int64(0), 0
	for first < uncleanable {
		m.reset()
		end, err := BuildMap(m, l.segs, first, uncleanable, 0)
		require.NoError(t, err)
		require.Greater(t, end, first, "progress")
		require.LessOrEqual(t, end, uncleanable)
		require.NotZero(t, m.Len())
		// Every keyed record of [first, end) is mapped, to its latest
		// offset within the range.
		latest := map[string]int64{}
		for _, r := range records(readSegs(t, l.segs)) {
			if r.Offset >= first && r.Offset < end {
				latest[string(r.Key)] = r.Offset
			}
		}
		require.Equal(t, len(latest), m.Len())
		for k, want := range latest {
			off, ok := m.Get([]byte(k))
			require.True(t, ok)
			require.Equal(t, want, off)
		}
		first = end
		passes++
	}
	require.Greater(t, passes, 3)
	require.Equal(t, uncleanable, first)
}

func TestBuildMapTooSmall(t *testing.T) {
	l := newTestLog(t, 4<<10)
	l.write(kv(string(make([]byte, 500)), "v"))
	l.roll()
	m := NewOffsetMap(200, nil)
	end, err := BuildMap(m, l.segs, 0, l.active().Base(), 0)
	require.ErrorIs(t, err, ErrMapTooSmall)
	require.Zero(t, end)

	_, err = BuildMap(nil, l.segs, 0, 1, 0)
	require.ErrorIs(t, err, ErrInvalid)
}
