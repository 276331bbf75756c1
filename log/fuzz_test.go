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
	if err != nil {
		require.True(t, errors.Is(err, log.ErrIncomplete) || errors.Is(err, log.ErrCorrupt) ||
			errors.Is(err, log.ErrUnsupportedCompression), "unexpected error %v", err)
		return
	}
	require.NoError(t, ierr)
	require.NoError(t, it.Err())
	require.Len(t, recs, int(h.NumRecords))

	out, err := log.AppendBatchHeader(nil, h, recs)
	require.NoError(t, err)
	require.Equal(t, b[:h.Size()], out)
}
