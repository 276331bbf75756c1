package strata

import (
	"math"
	"strconv"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
)

// parseRegistryFast parses topics.json as writeRegistry writes it (version
// 2, every key in the case it is written in, each once, no nulls, strings
// of printable ASCII without escapes) without encoding/json, whose first
// use in a process (building its decoders of the registry's types by
// reflection) is most of the first Open's cost. It returns false for
// anything else, valid or not: parseRegistry then decodes the file with
// encoding/json, whose result is the reference (FuzzParseRegistryFast
// holds the two to the same answer). A file it accepts is one
// encoding/json decodes without error to the same entries, and whose
// checksum matches.
func parseRegistryFast(data []byte) (map[string]registryEntry, bool) {
	p := regParser{b: data}
	var version, crc int64
	var topics map[string]registryEntry
	start, end := -1, -1
	var seen uint8
	ok := p.object(func(key []byte) bool {
		switch {
		case string(key) == "version" && seen&1 == 0:
			seen |= 1
			var ok bool
			version, ok = p.int(math.MinInt, math.MaxInt)
			return ok
		case string(key) == "topics" && seen&2 == 0:
			seen |= 2
			p.space()
			start = p.i
			var ok bool
			topics, ok = p.topics()
			end = p.i
			return ok
		case string(key) == "crc32c" && seen&4 == 0:
			seen |= 4
			var ok bool
			crc, ok = p.int(0, math.MaxUint32)
			return ok
		}
		return false
	})
	if !ok || !p.end() || version != registryVersion || start < 0 {
		return nil, false
	}
	if checksum(data[start:end]) != uint32(crc) {
		return nil, false
	}
	return topics, true
}

// regParser reads JSON from b at i, the subset parseRegistryFast accepts.
// Each method returns false where the input leaves that subset.
type regParser struct {
	b []byte
	i int
}

// space skips JSON's white space.
func (p *regParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// end reports whether only white space is left.
func (p *regParser) end() bool {
	p.space()
	return p.i == len(p.b)
}

// byte consumes c, after white space.
func (p *regParser) byte(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// object reads an object, calling member for each key (the bytes of the
// input: member copies what it keeps) with the parser before the member's
// value, which member must consume.
func (p *regParser) object(member func(key []byte) bool) bool {
	if !p.byte('{') {
		return false
	}
	if p.byte('}') {
		return true
	}
	for {
		key, ok := p.string()
		if !ok || !p.byte(':') || !member(key) {
			return false
		}
		if p.byte('}') {
			return true
		}
		if !p.byte(',') {
			return false
		}
	}
}

// string reads a string of printable ASCII without escapes, and returns
// its bytes in the input.
func (p *regParser) string() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start := p.i
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			return s, true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// number reads the token of a JSON number and reports whether it is an
// integer (no fraction, no exponent).
func (p *regParser) number() (tok []byte, integer, ok bool) {
	p.space()
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case digits() == 0:
		return nil, false, false
	}
	integer = true
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, false, false
		}
		integer = false
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, false, false
		}
		integer = false
	}
	return p.b[start:p.i], integer, true
}

// int reads an integer in [lo, hi], as encoding/json decodes one into an
// integer field of that range.
func (p *regParser) int(lo, hi int64) (int64, bool) {
	tok, integer, ok := p.number()
	if !ok || !integer {
		return 0, false
	}
	n, err := strconv.ParseInt(string(tok), 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, false
	}
	return n, true
}

// float reads a number as encoding/json decodes one into a float64.
func (p *regParser) float() (float64, bool) {
	tok, _, ok := p.number()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	return f, err == nil
}

// bool reads true or false.
func (p *regParser) bool() (bool, bool) {
	p.space()
	for _, lit := range [...]string{"true", "false"} {
		if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
			p.i += len(lit)
			return lit == "true", true
		}
	}
	return false, false
}

// topics reads the registry's topics: name → {"id", "config"}.
func (p *regParser) topics() (map[string]registryEntry, bool) {
	out := map[string]registryEntry{}
	ok := p.object(func(key []byte) bool {
		if _, dup := out[string(key)]; dup {
			return false
		}
		name := string(key)
		var e registryEntry
		var seen uint8
		ok := p.object(func(key []byte) bool {
			switch {
			case string(key) == "id" && seen&1 == 0:
				seen |= 1
				s, ok := p.string()
				if !ok {
					return false
				}
				id, err := topic.ParseID(string(s))
				e.ID = id
				return err == nil
			case string(key) == "config" && seen&2 == 0:
				seen |= 2
				var ok bool
				e.Config, ok = p.config()
				return ok
			}
			return false
		})
		out[name] = e
		return ok && seen&1 != 0 // encoding/json's reader refuses a topic without an id
	})
	return out, ok
}

// config reads a topic.Config, every field under its JSON name.
func (p *regParser) config() (topic.Config, bool) {
	var c topic.Config
	var seen uint32
	ints := func(bit uint32, lo, hi int64, set func(int64)) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		n, ok := p.int(lo, hi)
		set(n)
		return ok
	}
	const (
		i64Min, i64Max = math.MinInt64, math.MaxInt64
		intMin, intMax = math.MinInt, math.MaxInt
	)
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case "partitions":
			return ints(1<<0, intMin, intMax, func(n int64) { c.Partitions = int(n) })
		case "retention":
			return ints(1<<1, i64Min, i64Max, func(n int64) { c.Retention = time.Duration(n) })
		case "retention_bytes":
			return ints(1<<2, i64Min, i64Max, func(n int64) { c.RetentionBytes = n })
		case "segment_bytes":
			return ints(1<<3, i64Min, i64Max, func(n int64) { c.SegmentBytes = n })
		case "segment_age":
			return ints(1<<4, i64Min, i64Max, func(n int64) { c.SegmentAge = time.Duration(n) })
		case "max_batch_bytes":
			return ints(1<<5, intMin, intMax, func(n int64) { c.MaxBatchBytes = int(n) })
		case "timestamp_type":
			return ints(1<<6, math.MinInt8, math.MaxInt8, func(n int64) { c.TimestampType = log.TimestampType(n) })
		case "index_interval_bytes":
			return ints(1<<7, intMin, intMax, func(n int64) { c.IndexIntervalBytes = int(n) })
		case "max_index_bytes":
			return ints(1<<8, intMin, intMax, func(n int64) { c.MaxIndexBytes = int(n) })
		case "delete_retention":
			return ints(1<<9, i64Min, i64Max, func(n int64) { c.DeleteRetention = time.Duration(n) })
		case "min_compaction_lag":
			return ints(1<<10, i64Min, i64Max, func(n int64) { c.MinCompactionLag = time.Duration(n) })
		case "max_compaction_lag":
			return ints(1<<11, i64Min, i64Max, func(n int64) { c.MaxCompactionLag = time.Duration(n) })
		case "compression_level":
			return ints(1<<12, intMin, intMax, func(n int64) { c.CompressionLevel = int(n) })
		case "cleanup_policy", "compression":
			bit := uint32(1 << 13)
			if string(key) == "compression" {
				bit = 1 << 14
			}
			if seen&bit != 0 {
				return false
			}
			seen |= bit
			s, ok := p.string()
			if string(key) == "compression" {
				c.Compression = topic.CompressionType(known(s, compressionTypes))
			} else {
				c.CleanupPolicy = topic.CleanupPolicy(known(s, cleanupPolicies))
			}
			return ok
		case "min_cleanable_dirty_ratio":
			if seen&(1<<15) != 0 {
				return false
			}
			seen |= 1 << 15
			var ok bool
			c.MinCleanableDirtyRatio, ok = p.float()
			return ok
		case "preallocate":
			if seen&(1<<16) != 0 {
				return false
			}
			seen |= 1 << 16
			var ok bool
			c.Preallocate, ok = p.bool()
			return ok
		case "sync":
			if seen&(1<<17) != 0 {
				return false
			}
			seen |= 1 << 17
			var ok bool
			c.Sync, ok = p.sync()
			return ok
		}
		return false
	})
	return c, ok
}

// sync reads a partition.SyncPolicy, whose fields have no JSON names.
func (p *regParser) sync() (partition.SyncPolicy, bool) {
	var s partition.SyncPolicy
	var seen uint8
	ok := p.object(func(key []byte) bool {
		switch {
		case string(key) == "Mode" && seen&1 == 0:
			seen |= 1
			n, ok := p.int(math.MinInt8, math.MaxInt8)
			s.Mode = partition.SyncMode(n)
			return ok
		case string(key) == "Interval" && seen&2 == 0:
			seen |= 2
			n, ok := p.int(math.MinInt64, math.MaxInt64)
			s.Interval = time.Duration(n)
			return ok
		}
		return false
	})
	return s, ok
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
