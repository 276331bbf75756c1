package log_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stretchr/testify/require"
)

// FuzzBatch checks that decoding never panics, that the readers agree, and
// that every batch Validate accepts re-encodes to exactly the same bytes.
// Each input is checked as it is and, so that mutations reach the records
// instead of stopping at the CRC, once more with its CRC recomputed. Seeds
// are in testdata/fuzz/FuzzBatch (TestFuzzSeeds -update writes them).
func FuzzBatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b)
		if h, err := log.ReadHeader(b); err == nil && h.Size() <= len(b) {
			fixed := slices.Clone(b)
			fixCRC(fixed[:h.Size()])
			checkDecode(t, fixed)
		}
	})
}

func checkDecode(t *testing.T, b []byte) {
	hh, herr := log.ReadHeader(b)
	_, cerr := log.CheckBatch(b)
	h, err := log.Validate(b)
	for range log.Records(b) {
	}
	if herr != nil {
		require.Equal(t, herr, cerr)
	}
	if cerr != nil {
		require.Equal(t, cerr, err)
	}

	// Read every record, keeping the stored timestamps.
	it, ierr := log.NewRecordIter(b)
	var recs []log.Record
	if ierr == nil {
		require.Equal(t, hh, it.Header())
		for {
			r := log.Record{}
			if !it.Next(&r) {
				break
			}
			r.Timestamp = time.UnixMilli(it.StoredTimestamp())
			recs = append(recs, r)
		}
	}
	checkIterHeader(t, b, hh, herr, it, ierr)
	if err != nil {
		require.True(t, errors.Is(err, log.ErrIncomplete) || errors.Is(err, log.ErrCorrupt) ||
			errors.Is(err, log.ErrUnsupportedCompression) || errors.Is(err, log.ErrUnsupportedFormat), "unexpected error %v", err)
		return
	}
	require.NoError(t, ierr)
	require.NoError(t, it.Err())
	require.Len(t, recs, int(h.NumRecords))

	out, err := log.EncodeBatchWithHeader(nil, h, recs)
	require.NoError(t, err)
	require.Equal(t, b[:h.Size()], out)
}

// checkIterHeader checks NewRecordIterHeader against NewRecordIter (it and
// ierr, over b whose header decoded as hh, herr): given the right header it
// reads the same records and stops with the same error; given a wrong one
// it may read wrong records, but never panics.
func checkIterHeader(t *testing.T, b []byte, hh log.BatchHeader, herr error, it log.RecordIter, ierr error) {
	if herr != nil {
		return
	}
	it2, err2 := log.NewRecordIterHeader(b, hh)
	require.Equal(t, ierr == nil, err2 == nil, "%v / %v", ierr, err2)
	if ierr == nil {
		fresh, _ := log.NewRecordIter(b)
		var r1, r2 log.Record
		for {
			ok1, ok2 := fresh.Next(&r1), it2.Next(&r2)
			require.Equal(t, ok1, ok2)
			if !ok1 {
				break
			}
			require.Equal(t, r1, r2)
		}
		require.Equal(t, fresh.Err(), it2.Err())
	}
	for _, bad := range []func(h *log.BatchHeader){
		func(h *log.BatchHeader) { h.NumRecords++ },
		func(h *log.BatchHeader) { h.NumRecords = 1 << 30 },
		func(h *log.BatchHeader) { h.LastOffsetDelta = -1 },
		func(h *log.BatchHeader) { h.Length -= 7 },
		func(h *log.BatchHeader) { h.Length = 1 << 30 },
		func(h *log.BatchHeader) { h.Attributes |= log.AttrLogAppendTime },
	} {
		h := hh
		bad(&h)
		if it, err := log.NewRecordIterHeader(b, h); err == nil {
			var r log.Record
			for it.Next(&r) {
			}
		}
	}
}
