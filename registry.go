package strata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/vfs"
)

// registryVersion is the version of topics.json this build writes. It
// reads version 1 too (configurations without ids or checksum), and gives
// the topics of such a file ids at Open.
const registryVersion = 2

// registry is topics.json: every topic's id and configuration, and a
// CRC-32C of them, so that damage which still parses (a flipped digit) is
// told from a valid file. The checksum covers the topics as the file holds
// them (in compact form), not as this build would write them, so that a
// later build with more configuration fields reads the file as it is.
type registry struct {
	Version int             `json:"version"`
	Topics  json.RawMessage `json:"topics"`
	CRC32C  uint32          `json:"crc32c"`
}

// registryEntry is one topic of the registry.
type registryEntry struct {
	ID     topic.ID     `json:"id"`
	Config topic.Config `json:"config"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum returns the CRC-32C of the compact form of raw, a valid JSON
// value: raw without the white space between its tokens. It copies runs of
// bytes (a string whole, up to its closing quote; the bytes between two
// runs of white space) rather than looking at each byte on its own.
func checksum(raw []byte) uint32 {
	var buf [512]byte
	sum, n := uint32(0), 0
	for i := 0; i < len(raw); {
		j := i + 1
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		case '"':
			j = stringEnd(raw, i)
		default:
			for j < len(raw) && !tokenBreak(raw[j]) {
				j++
			}
		}
		for tok := raw[i:j]; len(tok) > 0; {
			m := copy(buf[n:], tok)
			if n, tok = n+m, tok[m:]; n == len(buf) {
				sum, n = crc32.Update(sum, castagnoli, buf[:]), 0
			}
		}
		i = j
	}
	return crc32.Update(sum, castagnoli, buf[:n])
}

// tokenBreak reports whether c ends a run of bytes outside a string: white
// space, or the quote that starts one.
func tokenBreak(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"'
}

// stringEnd returns the index after the quote that closes the string
// whose opening quote is at raw[start] (a quote not escaped: after an even
// number of backslashes), or len(raw) if none does.
func stringEnd(raw []byte, start int) int {
	for j := start + 1; ; {
		k := bytes.IndexByte(raw[j:], '"')
		if k < 0 {
			return len(raw)
		}
		j += k
		escapes := 0
		for b := j - 1; b > start && raw[b] == '\\'; b-- {
			escapes++
		}
		j++
		if escapes%2 == 0 {
			return j
		}
	}
}

// damagedRegistry says what is wrong with topics.json and how to recover.
func damagedRegistry(path string, reason error) error {
	return log.Corruption(fmt.Sprintf("strata: %s is damaged (%v); the partition data is untouched: "+
		"restore the file from a backup, or rebuild it from the partition directories with "+
		"strata.RebuildRegistry(%q), which keeps every topic's data and id but not its configuration",
		path, reason, filepath.Dir(path)))
}

// readRegistry reads topics.json: every topic's id (zero for the topics of
// a version 1 file) and configuration. No file means no topics.
func readRegistry(fsys vfs.FS, dir string) (map[string]registryEntry, error) {
	path := filepath.Join(dir, topicsFile)
	data, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]registryEntry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("strata: reading %s: %w", path, err)
	}
	return parseRegistry(path, data)
}

// parseRegistry parses data, the contents of topics.json at path. A file
// as this build writes it is read by parseRegistryFast; any other is
// decoded once with encoding/json, its topics kept raw, checked against
// their checksum and then decoded by version.
func parseRegistry(path string, data []byte) (map[string]registryEntry, error) {
	if topics, ok := parseRegistryFast(data); ok {
		return topics, nil
	}
	return parseRegistryJSON(path, data)
}

// parseRegistryJSON is parseRegistry with encoding/json.
func parseRegistryJSON(path string, data []byte) (map[string]registryEntry, error) {
	var r registry
	if err := json.Unmarshal(data, &r); err != nil {
		var head struct {
			Version int `json:"version"`
		}
		if json.Unmarshal(data, &head) != nil || head.Version == 1 || head.Version == registryVersion {
			return nil, damagedRegistry(path, err)
		}
		r.Version = head.Version // a later version, whose fields may differ
	}
	switch r.Version {
	case 1:
		var v1 map[string]topic.Config
		if len(r.Topics) > 0 {
			if err := json.Unmarshal(r.Topics, &v1); err != nil {
				return nil, damagedRegistry(path, err)
			}
		}
		out := make(map[string]registryEntry, len(v1))
		for name, cfg := range v1 {
			out[name] = registryEntry{Config: cfg}
		}
		return out, nil
	case registryVersion:
		if r.Topics == nil {
			return nil, damagedRegistry(path, errors.New("it lists no topics"))
		}
		if sum := checksum(r.Topics); sum != r.CRC32C {
			return nil, damagedRegistry(path, fmt.Errorf("its checksum is %d, its contents sum to %d", r.CRC32C, sum))
		}
		topics := map[string]registryEntry{}
		if err := json.Unmarshal(r.Topics, &topics); err != nil {
			return nil, damagedRegistry(path, err)
		}
		for name, e := range topics {
			if e.ID.IsZero() {
				return nil, damagedRegistry(path, fmt.Errorf("topic %q has no id", name))
			}
		}
		return topics, nil
	}
	return nil, log.Corruption(fmt.Sprintf("strata: %s has version %d; this build reads versions 1 and %d", path, r.Version, registryVersion))
}

// writeRegistry replaces topics.json atomically: a temporary file, fsync,
// rename, fsync of the directory.
func writeRegistry(fsys vfs.FS, dir string, topics map[string]registryEntry) error {
	data, ok := appendRegistry(make([]byte, 0, 128+768*len(topics)), topics)
	if !ok {
		var err error
		if data, err = marshalRegistry(topics); err != nil {
			return err
		}
	}
	path := filepath.Join(dir, topicsFile)
	if err := vfs.WriteFileAtomic(fsys, path, data); err != nil {
		return fmt.Errorf("strata: writing %s: %w", path, err)
	}
	return nil
}

// marshalRegistry is topics.json for topics as encoding/json writes it,
// what appendRegistry writes when it can.
func marshalRegistry(topics map[string]registryEntry) ([]byte, error) {
	raw, err := json.Marshal(topics)
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(registry{Version: registryVersion, Topics: raw, CRC32C: crc32.Checksum(raw, castagnoli)}, "", "  ")
}

// entries returns the registry entries of topics.
func entries(topics map[string]*topic.Topic) map[string]registryEntry {
	out := make(map[string]registryEntry, len(topics))
	for name, t := range topics {
		out[name] = registryEntry{ID: t.ID(), Config: t.Config()}
	}
	return out
}
