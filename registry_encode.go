package strata

import (
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"time"
)

// The literals of topics.json's layout between its values (MarshalIndent's,
// two-space indents): appendRegistry writes them, parseRegistryFast reads
// them.
const (
	layoutVersion      = "{\n  \"version\": "  // then the version
	layoutTopics       = ",\n  \"topics\": "   // then the topics, {} if none
	layoutTopic        = "\n    "              // then a topic's quoted name
	layoutID           = ": {\n      \"id\": " // then its quoted id
	layoutConfig       = ",\n      \"config\": {"
	layoutField        = "\n        \"" // then a config field's name
	layoutColon        = "\": "         // after a field's name, then its value
	layoutSyncMode     = "{\n          \"Mode\": "
	layoutSyncInterval = ",\n          \"Interval\": "
	layoutSyncEnd      = "\n        },"
	layoutEntryEnd     = "\n      }\n    }"
	layoutTopicsEnd    = "\n  }"
	layoutChecksum     = ",\n  \"crc32c\": "
	layoutEnd          = "\n}"
)

// appendRegistry appends topics.json for topics to b: the bytes
// encoding/json's MarshalIndent (two-space indents) writes for the registry
// of writeRegistry, written without reflection, which took most of the
// time of creating a topic in memory. It reports false, leaving the
// encoding to encoding/json, for a value only encoding/json spells: a
// string with a byte to escape, or a float that needs an exponent or that
// JSON cannot hold. TestAppendRegistryIsMarshalIndent holds it to
// encoding/json's bytes for every field of topic.Config.
func appendRegistry(b []byte, topics map[string]registryEntry) ([]byte, bool) {
	b = append(b, layoutVersion...)
	b = strconv.AppendInt(b, registryVersion, 10)
	b = append(b, layoutTopics...)
	start := len(b)
	if len(topics) == 0 {
		b = append(b, "{}"...)
	} else {
		b = append(b, '{')
		names := make([]string, 0, len(topics))
		for name := range topics {
			names = append(names, name)
		}
		slices.Sort(names)
		for i, name := range names {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			b = append(b, layoutTopic...)
			if b, ok = appendPlainString(b, name); !ok {
				return b, false
			}
			if b, ok = appendEntry(b, topics[name]); !ok {
				return b, false
			}
		}
		b = append(b, layoutTopicsEnd...)
	}
	sum := checksum(b[start:])
	b = append(b, layoutChecksum...)
	b = strconv.AppendUint(b, uint64(sum), 10)
	return append(b, layoutEnd...), true
}

// appendEntry appends the value of one topic's entry, at the registry's
// third level of indentation, after its key.
func appendEntry(b []byte, e registryEntry) ([]byte, bool) {
	c := e.Config
	b = append(b, layoutID...)
	b = append(b, '"')
	b = base64.RawURLEncoding.AppendEncode(b, e.ID[:])
	b = append(b, '"')
	b = append(b, layoutConfig...)
	field := func(name string) {
		b = append(b, layoutField...)
		b = append(b, name...)
		b = append(b, layoutColon...)
	}
	integer := func(name string, v int64) {
		field(name)
		b = strconv.AppendInt(b, v, 10)
		b = append(b, ',')
	}
	duration := func(name string, d time.Duration) { integer(name, int64(d)) }
	var ok bool
	integer("partitions", int64(c.Partitions))
	duration("retention", c.Retention)
	integer("retention_bytes", c.RetentionBytes)
	field("cleanup_policy")
	if b, ok = appendPlainString(b, string(c.CleanupPolicy)); !ok {
		return b, false
	}
	b = append(b, ',')
	integer("segment_bytes", c.SegmentBytes)
	duration("segment_age", c.SegmentAge)
	integer("max_batch_bytes", int64(c.MaxBatchBytes))
	integer("timestamp_type", int64(c.TimestampType))
	field("sync")
	b = append(b, layoutSyncMode...)
	b = strconv.AppendInt(b, int64(c.Sync.Mode), 10)
	b = append(b, layoutSyncInterval...)
	b = strconv.AppendInt(b, int64(c.Sync.Interval), 10)
	b = append(b, layoutSyncEnd...)
	integer("index_interval_bytes", int64(c.IndexIntervalBytes))
	integer("max_index_bytes", int64(c.MaxIndexBytes))
	field("min_cleanable_dirty_ratio")
	if b, ok = appendPlainFloat(b, c.MinCleanableDirtyRatio); !ok {
		return b, false
	}
	b = append(b, ',')
	duration("delete_retention", c.DeleteRetention)
	duration("min_compaction_lag", c.MinCompactionLag)
	duration("max_compaction_lag", c.MaxCompactionLag)
	if c.Compression != "" {
		field("compression")
		if b, ok = appendPlainString(b, string(c.Compression)); !ok {
			return b, false
		}
		b = append(b, ',')
	}
	if c.CompressionLevel != 0 {
		integer("compression_level", int64(c.CompressionLevel))
	}
	field("preallocate")
	b = strconv.AppendBool(b, c.Preallocate)
	return append(b, layoutEntryEnd...), true
}

// appendPlainString appends s quoted, and reports false if a byte of it is
// one encoding/json escapes (a control byte, a quote, a backslash, <, > or
// &) or not ASCII.
func appendPlainString(b []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return b, false
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), true
}

// appendPlainFloat appends f as encoding/json spells it without an
// exponent, and reports false for a float that needs one (or is not
// finite, which JSON cannot hold).
func appendPlainFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return b, false
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64), true
}
