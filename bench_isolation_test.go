package strata_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// BenchmarkStoreReadIsolation reads a partition of 100 k records of 100 B,
// in batches of 10, from its start to its end through Store.Read (chunks
// of 1000 records), Scan and Get (every 97th record), at ReadUncommitted
// and at ReadCommitted, on plain data and on data written by
// transactions of one batch each, a tenth of them aborted. The lines of
// one data set read the same partition.
func BenchmarkStoreReadIsolation(b *testing.B) {
	const batches, per = 10_000, 10
	for _, data := range []string{"plain", "txn"} {
		s, err := strata.Open("/b", &strata.Options{FS: vfs.NewMem(), Sync: strata.SyncNever, RetentionCheckInterval: -1, CleanerInterval: -1})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.CreateTopic("t", strata.TopicConfig{}); err != nil {
			b.Fatal(err)
		}
		value := make([]byte, 100)
		recs := make([]strata.Record, per)
		for i := range recs {
			recs[i].Value = value
		}
		for i := range batches {
			if data == "plain" {
				_, err = s.AppendTo(context.Background(), "t", 0, recs...)
			} else {
				pid := int64(i % 50)
				if _, err = strata.AppendTxnBatch(s, "t", 0, pid, 0, int32(i/50*per), recs); err == nil {
					_, err = strata.WriteMarker(s, "t", 0, pid, 0, i%10 != 0)
				}
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		end, _ := s.ListOffsets("t", 0, strata.Latest)
		for _, iso := range []strata.Isolation{strata.ReadUncommitted, strata.ReadCommitted} {
			v := s.View(iso)
			b.Run(fmt.Sprintf("data=%s/call=Read/iso=%v", data, iso), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for off := int64(0); ; {
						got, err := v.Read(context.Background(), "t", 0, off, 1000)
						if err != nil {
							b.Fatal(off, err)
						}
						if len(got) == 0 {
							break
						}
						off = got[len(got)-1].Offset + 1
					}
				}
			})
			b.Run(fmt.Sprintf("data=%s/call=Scan/iso=%v", data, iso), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for _, err := range v.Scan("t", 0, 0) {
						if err != nil {
							b.Fatal(err)
						}
					}
				}
			})
			b.Run(fmt.Sprintf("data=%s/call=Get/iso=%v", data, iso), func(b *testing.B) {
				b.ReportAllocs()
				buf := make([]byte, 4096)
				for b.Loop() {
					for off := int64(0); off < end; off += 97 {
						if _, err := v.GetInto("t", 0, off, buf); err != nil && !errors.Is(err, strata.ErrNoRecord) {
							b.Fatal(off, err)
						}
					}
				}
			})
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
