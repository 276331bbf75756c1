package strata

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/topic"
)

// partitionCheckpoints are the checkpoint files of a partition directory
// and what Open does instead of trusting one that does not hold an offset.
var partitionCheckpoints = []struct{ name, instead string }{
	{"recovery-point", "Open ignores it and recovers from the first segment"},
	{"log-start-offset", "Open ignores it: the start offset becomes the first segment's base offset, and records DeleteRecords deleted are readable again"},
	{"cleaner-offset", "Open ignores it: the next cleaning starts from the beginning"},
	{"swap-end", "Open ignores it"},
}

// checkCheckpoints checks the partition's checkpoint files and returns its
// recovery point, -1 if none is readable.
func (v *verifier) checkCheckpoints(dir string) int64 {
	rp := int64(-1)
	for _, c := range partitionCheckpoints {
		path := filepath.Join(dir, c.name)
		data, ok := v.readSmall(path)
		if !ok {
			continue
		}
		off, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil || off < 0 {
			v.add(path, -1, true, fmt.Sprintf("holds %.32q, not an offset", data), c.instead)
			continue
		}
		if c.name == "recovery-point" {
			rp = off
		}
	}
	return rp
}

// checkMetadata checks partition.metadata: Kafka's format, naming the
// topic id topics.json gives the topic.
func (v *verifier) checkMetadata(dir string, e registryEntry, known bool) {
	path := filepath.Join(dir, topic.MetadataFile)
	data, ok := v.readSmall(path)
	if !ok {
		return
	}
	id, ok := topic.ParseMetadata(data)
	const fix = "Open writes it again from topics.json"
	switch {
	case len(data) == 0 && v.rep.Live:
		v.add(path, -1, false, "empty: a partition being created", fix)
	case !ok:
		v.add(path, -1, true, fmt.Sprintf("holds %.48q, not \"version: 0\" and a topic id", data), fix)
	case known && !e.ID.IsZero() && id != e.ID:
		v.add(path, -1, true, fmt.Sprintf("names topic id %s, topics.json %s", id, e.ID), fix)
	}
}

// checkTxnIndex checks a .txnindex: whole 34-byte entries of version 0,
// each a transaction whose ABORT marker lies in the segment, at or after
// its first offset.
func (v *verifier) checkTxnIndex(path string, base int64) {
	data, ok := v.readSmall(path)
	if !ok {
		return
	}
	const fix = "read_committed readers of the partition skip the transactions it lists: restore it from a backup, or delete the topic's aborted data"
	if rem := len(data) % segment.AbortedTxnSize; rem != 0 {
		v.add(path, int64(len(data)-rem), !v.rep.Live, fmt.Sprintf("size %d is not a multiple of the %d-byte entry", len(data), segment.AbortedTxnSize), fix)
	}
	be := binary.BigEndian
	for i := 0; i+segment.AbortedTxnSize <= len(data); i += segment.AbortedTxnSize {
		e := data[i:]
		version, first, last := be.Uint16(e), int64(be.Uint64(e[10:])), int64(be.Uint64(e[18:]))
		switch {
		case version != 0:
			v.add(path, int64(i), true, fmt.Sprintf("entry %d: version %d, want 0", i/segment.AbortedTxnSize, version), fix)
			return
		case first < 0 || first > last || last < base:
			v.add(path, int64(i), true, fmt.Sprintf("entry %d: first offset %d and last offset %d out of order or below the segment's base offset %d",
				i/segment.AbortedTxnSize, first, last, base), fix)
			return
		}
	}
}

// checkSnapshot checks a producer-state .snapshot file as Open does
// (partition.CheckSnapshot).
func (v *verifier) checkSnapshot(path string) {
	data, ok := v.readSmall(path)
	if !ok {
		return
	}
	if pos, err := partition.CheckSnapshot(data); err != nil {
		msg := strings.TrimSuffix(err.Error(), ": "+partition.ErrCorruptSnapshot.Error())
		v.add(path, pos, true, msg, "Open ignores it and rebuilds the producer state from an earlier snapshot or the log")
	}
}
