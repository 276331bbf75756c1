package partition

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// TestAppendIfEnd appends to a partition that ends at 3 with each kind of
// expected end: the right one appends at it; a wrong one is a
// *WrongOffsetError carrying the actual end; bad input is refused first,
// whatever the end; and none but the right one changes the log.
func TestAppendIfEnd(t *testing.T) {
	big := log.Record{Value: make([]byte, 4<<10)}
	for _, tc := range []struct {
		name    string
		end     int64
		records []log.Record
		want    error // nil: appended at end
		actual  int64 // for ErrWrongOffset
	}{
		{name: "at end", end: 3, records: []log.Record{rec(3), rec(4)}},
		{name: "behind", end: 2, records: []log.Record{rec(3)}, want: ErrWrongOffset, actual: 3},
		{name: "empty partition's end", end: 0, records: []log.Record{rec(3)}, want: ErrWrongOffset, actual: 3},
		{name: "ahead", end: 4, records: []log.Record{rec(3)}, want: ErrWrongOffset, actual: 3},
		{name: "negative", end: -1, records: []log.Record{rec(3)}, want: ErrOutOfRange},
		{name: "anyEnd is not a wildcard", end: anyEnd, records: []log.Record{rec(3)}, want: ErrOutOfRange},
		{name: "no records at end", end: 3, want: ErrEmptyBatch},
		{name: "no records behind", end: 2, want: ErrEmptyBatch},
		{name: "too large behind", end: 2, records: []log.Record{big}, want: ErrBatchTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := memPartition(t, small(newClock()))
			defer p.Close()
			appendIDs(t, p, 0, 1, 2)
			before := p.Stats()

			off, err := p.AppendIfEnd(tc.records, tc.end)
			if tc.want == nil {
				require.NoError(t, err)
				require.Equal(t, tc.end, off)
				require.Equal(t, tc.end+int64(len(tc.records)), p.EndOffset())
				got := readRange(t, p, tc.end)
				require.Len(t, got, len(tc.records))
				for i := range got {
					require.Equal(t, tc.records[i].Value, got[i].Value)
				}
				return
			}
			require.ErrorIs(t, err, tc.want)
			var wrong *WrongOffsetError
			if tc.want == ErrWrongOffset {
				require.ErrorAs(t, err, &wrong)
				require.Equal(t, WrongOffsetError{Expected: tc.end, Actual: tc.actual}, *wrong)
				require.ErrorContains(t, err, "topic-0")
			} else {
				require.False(t, errors.As(err, &wrong), "bad input is not a wrong offset: %v", err)
			}
			require.Equal(t, int64(3), p.EndOffset())
			require.Equal(t, before, p.Stats())
			require.Len(t, readRange(t, p, 0), 3)
		})
	}
}

// TestAppendIfEndClosed: a closed partition is ErrClosed, whatever the
// end.
func TestAppendIfEndClosed(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	appendIDs(t, p, 0)
	require.NoError(t, p.Close())
	for _, end := range []int64{1, 0, 7} {
		_, err := p.AppendIfEnd([]log.Record{rec(1)}, end)
		require.ErrorIs(t, err, ErrClosed)
		require.NotErrorIs(t, err, ErrWrongOffset)
	}
}

// TestAppendIfEndTruncated: after Truncate moves the end back, an append
// expecting the old end fails with the new one, and one expecting the new
// end lands there.
func TestAppendIfEndTruncated(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	appendIDs(t, p, 0, 1, 2, 3)
	require.NoError(t, p.Truncate(2))
	_, err := p.AppendIfEnd([]log.Record{rec(9)}, 4)
	var wrong *WrongOffsetError
	require.ErrorAs(t, err, &wrong)
	require.Equal(t, int64(2), wrong.Actual)
	off, err := p.AppendIfEnd([]log.Record{rec(9)}, wrong.Actual)
	require.NoError(t, err)
	require.Equal(t, int64(2), off)
}

// TestAppendIfEndRace starts, round after round, several appenders at
// once with the same expected end, on a partition that rolls every few
// KiB: exactly one wins each round, the others are told the end it left,
// and the log holds exactly the winners' records, in round order.
func TestAppendIfEndRace(t *testing.T) {
	const appenders = 8
	rounds := 3000
	if raceEnabled || testing.Short() {
		rounds = 1000
	}
	for _, tc := range conditionalSyncPolicies {
		t.Run(tc.name, func(t *testing.T) {
			cfg := small(newClock())
			cfg.Sync = tc.sync
			p, _ := memPartition(t, cfg)
			defer p.Close()
			winners := make([]int, rounds)
			for r := range rounds {
				end := p.EndOffset()
				wins, errs := race(appenders, func(a int) (int64, error) {
					return p.AppendIfEnd([]log.Record{rec(r*appenders + a)}, end)
				})
				require.Len(t, wins, 1, "round %d: winners", r)
				require.Len(t, errs, appenders-1, "round %d", r)
				for _, err := range errs {
					var wrong *WrongOffsetError
					require.ErrorAs(t, err, &wrong, "round %d", r)
					require.Equal(t, WrongOffsetError{Expected: end, Actual: end + 1}, *wrong, "round %d", r)
				}
				require.Equal(t, end+1, p.EndOffset(), "round %d", r)
				require.Equal(t, end, wins[0].off, "round %d: appended at another offset", r)
				winners[r] = r*appenders + wins[0].a
			}
			got := readRange(t, p, 0)
			require.Len(t, got, rounds)
			for r, g := range got {
				require.Equal(t, rec(winners[r]).Value, g.Value, "offset %d", r)
			}
		})
	}
}
