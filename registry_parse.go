package strata

import (
	"math"
	"strconv"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
)

// parseRegistryFast parses topics.json laid out byte for byte as
// writeRegistry writes it (appendRegistry's bytes, or encoding/json's
// MarshalIndent, which are the same; the layout's literals are shared with
// appendRegistry): this build's version, every field of every topic
// in its place, names and strings of printable ASCII without escapes. It
// reads that layout straight through, the literals between the values and
// the values, without a general JSON parser: it runs once per Open, often
// in a process where none of its code has run yet, and there it costs about
// what it touches. It returns false for anything else, valid or not (a file
// edited by hand, or one from a build whose topics have other fields):
// parseRegistry then decodes the file with encoding/json, whose result is
// the reference (FuzzParseRegistryFast holds the two to the same answer). A
// file it accepts is one encoding/json decodes without error to the same
// entries, and whose checksum matches.
func parseRegistryFast(data []byte) (map[string]registryEntry, bool) {
	r := layoutReader{b: data, ok: true}
	r.lit(layoutVersion)
	if r.int(registryVersion, registryVersion); !r.ok {
		return nil, false
	}
	r.lit(layoutTopics)
	start := r.i
	topics := map[string]registryEntry{}
	if !r.skip("{}") {
		r.lit("{")
		for r.ok {
			name, e := r.entry()
			if _, dup := topics[name]; dup {
				return nil, false
			}
			topics[name] = e
			if !r.skip(",") {
				break
			}
		}
		r.lit(layoutTopicsEnd)
	}
	end := r.i
	r.lit(layoutChecksum)
	crc := r.int(0, math.MaxUint32)
	r.lit(layoutEnd)
	if !r.ok || r.i != len(data) || checksum(data[start:end]) != uint32(crc) {
		return nil, false
	}
	return topics, true
}

// layoutReader reads b from i, the layout parseRegistryFast accepts. Once
// the input leaves it, ok is false and every method returns a zero value.
type layoutReader struct {
	b  []byte
	i  int
	ok bool
}

// skip consumes s if the input goes on with it, and reports whether it did.
func (r *layoutReader) skip(s string) bool {
	if r.ok && len(r.b)-r.i >= len(s) && string(r.b[r.i:r.i+len(s)]) == s {
		r.i += len(s)
		return true
	}
	return false
}

// lit consumes s, which the input must go on with.
func (r *layoutReader) lit(s string) {
	if !r.skip(s) {
		r.ok = false
	}
}

// digits returns the end of the run of decimal digits at j.
func (r *layoutReader) digits(j int) int {
	for j < len(r.b) && r.b[j] >= '0' && r.b[j] <= '9' {
		j++
	}
	return j
}

// number consumes a JSON number and returns its token: a minus sign, an
// integer part without leading zeros and, with frac, a fraction of at
// least one digit and an exponent (without frac, an integer: what follows
// is left to the caller, whose next literal refuses it).
func (r *layoutReader) number(frac bool) []byte {
	if !r.ok {
		return nil
	}
	j := r.i
	if j < len(r.b) && r.b[j] == '-' {
		j++
	}
	k := r.digits(j)
	if k == j || k-j > 1 && r.b[j] == '0' {
		r.ok = false
		return nil
	}
	if frac && k < len(r.b) && r.b[k] == '.' {
		if k = r.digits(k + 1); r.b[k-1] == '.' {
			r.ok = false
			return nil
		}
	}
	if frac && k < len(r.b) && (r.b[k] == 'e' || r.b[k] == 'E') {
		e := k + 1
		if e < len(r.b) && (r.b[e] == '+' || r.b[e] == '-') {
			e++
		}
		if k = r.digits(e); k == e {
			r.ok = false
			return nil
		}
	}
	tok := r.b[r.i:k]
	r.i = k
	return tok
}

// int consumes an integer in [lo, hi], the range of the field it goes to:
// encoding/json refuses one outside it.
func (r *layoutReader) int(lo, hi int64) int64 {
	tok := r.number(false)
	if !r.ok {
		return 0
	}
	n, err := strconv.ParseInt(string(tok), 10, 64)
	if err != nil || n < lo || n > hi {
		r.ok = false
		return 0
	}
	return n
}

// float consumes a number as encoding/json decodes one into a float64.
func (r *layoutReader) float() float64 {
	tok := r.number(true)
	if !r.ok {
		return 0
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		r.ok = false
	}
	return f
}

// str consumes a quoted string of printable ASCII without escapes, whose
// bytes are its value, and returns them (in the input).
func (r *layoutReader) str() []byte {
	r.lit(`"`)
	for j := r.i; r.ok && j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			s := r.b[r.i:j]
			r.i = j + 1
			return s
		case c < 0x20 || c >= 0x7f || c == '\\':
			r.ok = false
		}
	}
	r.ok = false
	return nil
}

// key consumes the key of a field of a topic's config, at its
// indentation, up to its value.
func (r *layoutReader) key(name string) {
	r.lit(layoutField)
	r.lit(name)
	r.lit(layoutColon)
}

// intField consumes an integer field of a config, and the comma after it.
func (r *layoutReader) intField(name string, lo, hi int64) int64 {
	r.key(name)
	n := r.int(lo, hi)
	r.lit(",")
	return n
}

// entry consumes one topic of the registry: its name, id and config.
func (r *layoutReader) entry() (string, registryEntry) {
	const (
		i64Min, i64Max = math.MinInt64, math.MaxInt64
		intMin, intMax = math.MinInt, math.MaxInt
	)
	var e registryEntry
	r.lit(layoutTopic)
	name := string(r.str())
	r.lit(layoutID)
	if id := r.str(); r.ok {
		var err error
		e.ID, err = topic.ParseID(string(id))
		r.ok = err == nil
	}
	r.lit(layoutConfig)
	c := &e.Config
	c.Partitions = int(r.intField("partitions", intMin, intMax))
	c.Retention = time.Duration(r.intField("retention", i64Min, i64Max))
	c.RetentionBytes = r.intField("retention_bytes", i64Min, i64Max)
	r.key("cleanup_policy")
	c.CleanupPolicy = topic.CleanupPolicy(known(r.str(), cleanupPolicies))
	r.lit(",")
	c.SegmentBytes = r.intField("segment_bytes", i64Min, i64Max)
	c.SegmentAge = time.Duration(r.intField("segment_age", i64Min, i64Max))
	c.MaxBatchBytes = int(r.intField("max_batch_bytes", intMin, intMax))
	c.TimestampType = log.TimestampType(r.intField("timestamp_type", math.MinInt8, math.MaxInt8))
	r.key("sync")
	r.lit(layoutSyncMode)
	c.Sync.Mode = partition.SyncMode(r.int(math.MinInt8, math.MaxInt8))
	r.lit(layoutSyncInterval)
	c.Sync.Interval = time.Duration(r.int(i64Min, i64Max))
	r.lit(layoutSyncEnd)
	c.IndexIntervalBytes = int(r.intField("index_interval_bytes", intMin, intMax))
	c.MaxIndexBytes = int(r.intField("max_index_bytes", intMin, intMax))
	r.key("min_cleanable_dirty_ratio")
	c.MinCleanableDirtyRatio = r.float()
	r.lit(",")
	c.DeleteRetention = time.Duration(r.intField("delete_retention", i64Min, i64Max))
	c.MinCompactionLag = time.Duration(r.intField("min_compaction_lag", i64Min, i64Max))
	c.MaxCompactionLag = time.Duration(r.intField("max_compaction_lag", i64Min, i64Max))
	if r.skip(layoutField + "compression" + layoutColon) {
		c.Compression = topic.CompressionType(known(r.str(), compressionTypes))
		r.lit(",")
	}
	if r.skip(layoutField + "compression_level" + layoutColon) {
		c.CompressionLevel = int(r.int(intMin, intMax))
		r.lit(",")
	}
	r.key("preallocate")
	c.Preallocate = r.skip("true")
	if !c.Preallocate {
		r.lit("false")
	}
	r.lit(layoutEntryEnd)
	return name, e
}

// The values of the string fields of a topic.Config that known returns
// without a copy.
var (
	compressionTypes = []string{string(topic.CompressionProducer), string(topic.CompressionNone), string(topic.CompressionGzip),
		string(topic.CompressionSnappy), string(topic.CompressionLZ4), string(topic.CompressionZstd)}
	cleanupPolicies = []string{string(topic.CleanupDelete), string(topic.CleanupCompact), string(topic.CleanupCompactDelete)}
)

// known returns s as a string: the one of values it equals, else a copy.
func known(s []byte, values []string) string {
	for _, v := range values {
		if string(s) == v {
			return v
		}
	}
	return string(s)
}
