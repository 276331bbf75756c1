package log_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// TestReadHeaderInto decodes good and bad headers into a header full of
// garbage: what it leaves there, and its error, are ReadHeader's.
func TestReadHeaderInto(t *testing.T) {
	batch, err := log.EncodeBatch(nil, someRecords(3, 10), log.BatchOptions{BaseOffset: 40, Now: 1})
	require.NoError(t, err)
	badMagic := append([]byte(nil), batch...)
	badMagic[16] = 7
	badLength := append([]byte(nil), batch...)
	badLength[8], badLength[9], badLength[10], badLength[11] = 0, 0, 0, 1
	badCount := append([]byte(nil), batch...)
	badCount[57], badCount[58], badCount[59], badCount[60] = 0, 0, 0, 9
	legacy := append([]byte(nil), batch...)
	legacy[16] = 1
	for name, b := range map[string][]byte{
		"good": batch, "short": batch[:10], "header cut": batch[:40], "bad magic": badMagic,
		"bad length": badLength, "bad count": badCount, "legacy": legacy,
	} {
		want, wantErr := log.ReadHeader(b)
		h := log.BatchHeader{BaseOffset: 1, Length: 2, NumRecords: 3, MaxTimestamp: 4}
		err := log.ReadHeaderInto(b, &h)
		require.Equal(t, want, h, name)
		require.Equal(t, wantErr, err, name)
	}
}
