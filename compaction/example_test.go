package compaction_test

import (
	"fmt"
	"time"

	"github.com/stratalog/strata/compaction"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// Example runs one cleaning round over a log of two sealed segments and an
// active one, as a partition would, and prints what survives.
func Example() {
	fsys := vfs.NewMem()
	_ = fsys.MkdirAll("p", 0o755)
	_ = fsys.MkdirAll("p/cleaned", 0o755)
	cfg := segment.Config{MaxBytes: 64 << 10, MaxIndexBytes: 4 << 10, AllowGaps: true}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

	// Write batches, one segment per line; the last segment is active.
	var segs []*segment.Segment
	next := int64(0)
	for _, batches := range [][][]log.Record{
		{{{Key: []byte("alice"), Value: []byte("v1")}, {Key: []byte("bob"), Value: []byte("v1")}}},
		{{{Key: []byte("alice"), Value: []byte("v2")}}, {{Key: []byte("bob")}}}, // bob's tombstone
		{{{Key: []byte("carol"), Value: []byte("v1")}}},
	} {
		s, _ := segment.Create(fsys, "p", next, cfg)
		for _, recs := range batches {
			b, _ := log.EncodeBatch(nil, recs, log.BatchOptions{BaseOffset: next, Now: now.UnixMilli()})
			_ = s.Append(b)
			next += int64(len(recs))
		}
		segs = append(segs, s)
	}

	// One round.
	infos := make([]compaction.SegmentInfo, len(segs))
	for i, s := range segs {
		infos[i] = compaction.Info(s)
	}
	ccfg := compaction.Config{}
	plan := compaction.Assess(infos, 0, now, ccfg)
	fmt.Printf("cleanable %v, dirty ratio %.2f, range [%d, %d)\n", plan.Cleanable, plan.Ratio, plan.FirstDirty, plan.FirstUncleanable)
	m := ccfg.NewOffsetMap()
	end, err := compaction.BuildMap(m, segs, plan.FirstDirty, plan.FirstUncleanable, 0)
	if err != nil {
		panic(err)
	}
	create := func(base int64) (*segment.Segment, error) {
		return segment.Create(fsys, "p/cleaned", base, cfg) // a partition would use .cleaned names
	}
	var cleaned []*segment.Segment
	for _, g := range compaction.Group(infos, end, cfg.MaxBytes, cfg.MaxIndexBytes) {
		out, st, err := compaction.Clean(segs[g.Start:g.End], create, compaction.Round{Config: ccfg, Map: m, End: end, Now: now})
		if err != nil {
			panic(err)
		}
		fmt.Printf("group of %d segments: %d of %d records kept\n", g.End-g.Start, st.RecordsWritten, st.RecordsRead)
		cleaned = append(cleaned, out...) // a partition would swap them in here
	}
	fmt.Println("next checkpoint:", end)

	for _, s := range append(cleaned, segs[len(segs)-1]) {
		data, _ := s.Read(nil, s.Base(), int(s.Size()))
		for p := 0; p < len(data); {
			h, _ := log.ReadHeader(data[p:])
			for r := range log.Records(data[p : p+h.Size()]) {
				value := fmt.Sprintf("%q", r.Value)
				if r.Value == nil {
					value = "tombstone"
				}
				fmt.Printf("%d %s=%s horizon=%v\n", r.Offset, r.Key, value, h.HasDeleteHorizon())
			}
			p += h.Size()
		}
	}
	// Output:
	// cleanable true, dirty ratio 1.00, range [0, 4)
	// group of 2 segments: 2 of 4 records kept
	// next checkpoint: 4
	// 2 alice="v2" horizon=false
	// 3 bob=tombstone horizon=true
	// 4 carol="v1" horizon=false
}
