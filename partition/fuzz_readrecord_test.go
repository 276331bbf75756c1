package partition

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"maps"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// FuzzReadRecordHostile: batches whose bytes are changed and whose CRC is
// then made to match again (hostile rather than damaged) are read record
// by record with ReadRecord: it never panics, and at each offset of a batch
// that a full decoding finds whole it returns the record that decoding
// does.
func FuzzReadRecordHostile(f *testing.F) {
	f.Add(uint16(70), byte(1), uint16(0), byte(0), uint8(0))
	f.Add(uint16(61), byte(0x7f), uint16(300), byte(0xff), uint8(1))
	f.Add(uint16(57), byte(0x40), uint16(1000), byte(0x80), uint8(2))
	f.Add(uint16(2000), byte(0x81), uint16(2001), byte(0x81), uint8(0))
	f.Fuzz(func(t *testing.T, p1 uint16, v1 byte, p2 uint16, v2 byte, which uint8) {
		m := vfs.NewMem()
		cfg := Config{SegmentBytes: 1 << 20, IndexIntervalBytes: 512}
		p, err := Open(m, "topic-0", cfg, false)
		require.NoError(t, err)
		big := make([]log.Record, 40)
		for i := range big {
			big[i] = rec(i)
			big[i].Value = append(big[i].Value, make([]byte, 100)...)
		}
		_, err = p.Append(big)
		require.NoError(t, err)
		_, err = p.AppendWith(big[:20], log.Gzip, 0)
		require.NoError(t, err)
		_, err = p.Append(big[:3])
		require.NoError(t, err)
		require.NoError(t, p.Close())

		path := "topic-0/" + segment.FileName(0, segment.LogSuffix)
		data, err := vfs.ReadFile(m, path)
		require.NoError(t, err)
		// The batch to change.
		pos := 0
		for range int(which % 3) {
			pos += 12 + int(binary.BigEndian.Uint32(data[pos+8:]))
		}
		size := 12 + int(binary.BigEndian.Uint32(data[pos+8:]))
		batch := data[pos : pos+size]
		for _, c := range []struct {
			at uint16
			v  byte
		}{{p1, v1}, {p2, v2}} {
			at := 21 + int(c.at)%(size-21)
			batch[at] ^= c.v
		}
		binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
		fl, err := m.OpenFile(path, os.O_RDWR, 0)
		require.NoError(t, err)
		_, err = fl.WriteAt(data, 0)
		require.NoError(t, err)
		require.NoError(t, fl.Close())

		p, err = Open(m, "topic-0", cfg, false)
		if err != nil {
			return
		}
		defer p.Close()
		// The records of the data batches a full decoding finds whole.
		want := map[int64]log.Record{}
		all, err := p.ReadBatches(nil, 0, 1<<30)
		require.NoError(t, err)
		var dec log.Decoder
		for len(all) > 0 {
			h, err := log.ReadHeader(all)
			if err != nil {
				break
			}
			it, err := dec.Iter(all, h)
			if err == nil && !h.IsControl() { // a control batch holds no records to look up
				got := map[int64]log.Record{}
				var r log.Record
				for it.Next(&r) {
					got[r.Offset] = log.Record{Offset: r.Offset, Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value)}
				}
				if it.Err() == nil {
					maps.Copy(want, got)
				}
			}
			all = all[h.Size():]
		}
		var r log.Record
		for off := int64(0); off < min(p.EndOffset(), 200); off++ {
			_, err := p.ReadRecord(off, &r, nil)
			w, whole := want[off]
			if !whole {
				continue // an error or not: the batch is hostile
			}
			require.NoError(t, err, "offset %d", off)
			require.Equal(t, w.Offset, r.Offset, "offset %d", off)
			require.Equal(t, w.Key, r.Key, "offset %d", off)
			require.Equal(t, w.Value, r.Value, "offset %d", off)
		}
	})
}
