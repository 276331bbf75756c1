package partition

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// TestWallMillis checks that the default clock of appends reads the wall
// clock: between two readings of time.Now.
func TestWallMillis(t *testing.T) {
	before := time.Now().UnixMilli()
	got := wallMillis()
	after := time.Now().UnixMilli()
	require.GreaterOrEqual(t, got, before)
	require.LessOrEqual(t, got, after)
}

// TestStampClock checks that appends stamp with the wall clock only when
// Now is left to its default, and with the caller's Now otherwise.
func TestStampClock(t *testing.T) {
	cfg, err := Config{}.Check()
	require.NoError(t, err)
	require.NotNil(t, cfg.stampMillis, "default Now: appends read the wall clock alone")

	at := time.UnixMilli(1_700_000_000_123)
	cfg, err = Config{Now: func() time.Time { return at }}.Check()
	require.NoError(t, err)
	require.Nil(t, cfg.stampMillis)
	require.Equal(t, at.UnixMilli(), cfg.nowMillis())

	p, _ := memPartition(t, Config{Now: func() time.Time { return at }})
	_, err = p.Append([]log.Record{{Value: []byte("v")}})
	require.NoError(t, err)
	p2, _ := memPartition(t, Config{})
	before := time.Now().UnixMilli()
	_, err = p2.Append([]log.Record{{Value: []byte("v")}})
	require.NoError(t, err)
	after := time.Now().UnixMilli()

	require.Equal(t, at.UnixMilli(), readRange(t, p, 0)[0].Timestamp.UnixMilli(), "the caller's clock")
	ts := readRange(t, p2, 0)[0].Timestamp.UnixMilli()
	require.GreaterOrEqual(t, ts, before)
	require.LessOrEqual(t, ts, after)
}
