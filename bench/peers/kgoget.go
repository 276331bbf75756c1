package peers

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// castagnoli is the CRC-32C table of record batch v2's checksum.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errKgoCompressed means a batch is compressed: the Kafka peers produce
// without compression, so neither broker should send one.
var errKgoCompressed = fmt.Errorf("peers: compressed batch: %w", errKgo)

// findRecord returns the key and value of the record at offset off in
// batches, the record batches (v2) of a Fetch response, checking the
// checksum of the batch that holds it and decoding that record alone
// (Kafka's DefaultRecordBatch layout: a 61-byte header whose CRC-32C
// covers everything from the attributes on, then the records, each
// prefixed by its length as a varint).
func findRecord(batches []byte, off int64) (key, value []byte, err error) {
	for len(batches) >= 61 {
		size := 12 + int(int32(binary.BigEndian.Uint32(batches[8:])))
		if size < 61 || size > len(batches) {
			break // a partial batch at the end of the response
		}
		raw := batches[:size]
		batches = batches[size:]
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw); err != nil {
			return nil, nil, err
		}
		if b.Magic != 2 {
			return nil, nil, fmt.Errorf("peers: batch of magic %d: %w", b.Magic, errKgo)
		}
		if off < b.FirstOffset || off > b.FirstOffset+int64(b.LastOffsetDelta) {
			continue
		}
		if crc32.Checksum(raw[21:], castagnoli) != uint32(b.CRC) {
			return nil, nil, fmt.Errorf("peers: batch at offset %d fails its CRC: %w", b.FirstOffset, errKgo)
		}
		if b.Attributes&0x07 != 0 {
			return nil, nil, errKgoCompressed
		}
		recs := b.Records
		for range b.NumRecords {
			n, w := binary.Varint(recs)
			if w <= 0 || n < 0 || n > int64(len(recs)-w) {
				return nil, nil, fmt.Errorf("peers: batch at offset %d has a bad record length: %w", b.FirstOffset, errKgo)
			}
			var r kmsg.Record
			if err := r.ReadFrom(recs[:w+int(n)]); err != nil {
				return nil, nil, err
			}
			recs = recs[w+int(n):]
			if b.FirstOffset+int64(r.OffsetDelta) == off {
				return r.Key, r.Value, nil
			}
		}
	}
	return nil, nil, fmt.Errorf("peers: no record at offset %d in the fetch: %w", off, errKgo)
}
