package strata

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/vfs"
)

// VerifyOptions are the options of Verify. The zero value checks
// everything.
type VerifyOptions struct {
	// Topic, if not empty, limits the check to that topic's partitions;
	// the store's own files (topics.json) are checked always.
	Topic string
	// Progress, if not nil, is called as the check goes with the bytes of
	// .log files checked so far and the total to check.
	Progress func(done, total int64)
}

// VerifyReport is what Verify checked and what it found.
type VerifyReport struct {
	// Dir is the directory checked.
	Dir string
	// Live says that a process held the directory's lock during the
	// check (known on Linux only): the tail of each partition's last
	// segment may be being written, and its indexes are preallocated.
	Live bool
	// Clean says that the directory holds the clean-shutdown marker: the
	// last process to write it closed it, so Open trusts its files.
	Clean bool
	// Partitions, Segments, Batches and Bytes count what was checked:
	// partition directories, segments (.log files), the batches (or
	// legacy messages) in them and their bytes.
	Partitions int
	Segments   int
	Batches    int64
	Bytes      int64
	// Files counts the index, checkpoint and other small files checked.
	Files int
	// Findings are the problems found, and the notes about a live or
	// crashed directory, in the order of the files.
	Findings []VerifyFinding
}

// VerifyFinding is one problem Verify found in a file, or a note about
// one.
type VerifyFinding struct {
	// File is the file's path.
	File string
	// Position is the byte position in File of the problem, -1 when it
	// concerns the whole file.
	Position int64
	// Damage says that the file is damaged; when false the finding is a
	// note of what is expected of a live directory or after a crash (an
	// active segment's tail still being written, preallocated indexes).
	Damage bool
	// Problem says what is wrong.
	Problem string
	// Recovery says what Open does about it (what strata verify --repair
	// does): "torn tail: 120 bytes after position 4096 would be cut (a torn
	// batch, offsets 310 to 314)".
	Recovery string
}

// Damaged reports whether the check found damage.
func (r *VerifyReport) Damaged() bool {
	return slices.ContainsFunc(r.Findings, func(f VerifyFinding) bool { return f.Damage })
}

// Verify checks the store directory dir without writing anything and
// without taking its lock, so it works on a directory a running Store
// holds: every batch of every segment (header, CRC, offsets increasing
// from the segment's base offset and between segments, its first timestamp
// not above its max), every offset and
// time index (shape, entries increasing, within the log, at batch starts
// whose offsets match), the checkpoints, producer-state snapshots,
// aborted-transaction indexes, partition.metadata, topics.json and
// producer-ids.json, and that every partition topics.json lists has its
// directory. Each problem is reported with its file and byte position and
// what recovery would do about it. Kafka's own partition directories are
// checked as well (a directory without topics.json).
//
// On a live directory (Linux tells it by the lock's holder in
// /proc/locks) what a running writer leaves is a note, not damage: the
// active segment's tail being written (a batch there that does not check
// is read again for up to a second first), preallocated zeros and index
// entries.
//
// Verify fails only when it cannot do the check: dir cannot be read
// (an error matching os.ErrNotExist when it does not exist), or
// opts.Topic is neither in topics.json nor has a partition directory
// (ErrUnknownTopic). Damage is in the report, not an error: see
// VerifyReport.Damaged.
func Verify(dir string, opts *VerifyOptions) (_ *VerifyReport, err error) {
	defer wrapErr(&err)
	var o VerifyOptions
	if opts != nil {
		o = *opts
	}
	fsys := vfs.OS
	if _, err := fsys.ReadDir(dir); err != nil {
		return nil, fmt.Errorf("strata: verifying %s: %w", dir, err)
	}
	v := &verifier{fsys: fsys, progress: o.Progress, rep: &VerifyReport{Dir: dir}}
	_, cerr := fsys.Stat(filepath.Join(dir, cleanFile))
	v.rep.Clean = cerr == nil
	v.rep.Live = lockHeld(dir) || lockHeld(filepath.Join(dir, lockFile))

	// topics.json before the listing: a topic a running store creates
	// has its directories before topics.json names it.
	topics := v.checkRegistry(dir)
	names, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("strata: verifying %s: %w", dir, err)
	}
	if slices.Contains(names, producerIDsFile) {
		v.checkProducerIDs(dir)
	}
	var parts []partitionDir
	for _, name := range names {
		t, n, ok := topic.ParsePartitionDir(name)
		if !ok || (o.Topic != "" && t != o.Topic) {
			continue
		}
		if info, err := fsys.Stat(filepath.Join(dir, name)); err != nil || !info.IsDir {
			continue
		}
		parts = append(parts, partitionDir{path: filepath.Join(dir, name), topic: t, partition: n})
	}
	parts = v.missingPartitions(dir, topics, parts, o.Topic)
	if _, known := topics[o.Topic]; o.Topic != "" && len(parts) == 0 && !known {
		return nil, fmt.Errorf("strata: verifying %s: no partition of topic %q: %w", dir, o.Topic, ErrUnknownTopic)
	}
	for _, p := range parts {
		v.total += v.logBytes(p.path)
	}
	for _, p := range parts {
		e, known := topics[p.topic]
		if err := v.checkPartition(p, e, known); err != nil {
			return nil, err
		}
	}
	return v.rep, nil
}

// missingPartitions reports the partitions topics.json lists (of topic,
// if not empty) that have no directory, and returns parts.
func (v *verifier) missingPartitions(dir string, topics map[string]registryEntry, parts []partitionDir, only string) []partitionDir {
	have := map[string]bool{}
	for _, p := range parts {
		have[filepath.Base(p.path)] = true
	}
	names := slices.Sorted(maps.Keys(topics))
	for _, name := range names {
		if only != "" && name != only {
			continue
		}
		for i := range topics[name].Config.Partitions {
			if d := topic.PartitionDir(name, i); !have[d] {
				// A running store may be deleting the topic.
				v.add(filepath.Join(dir, d), -1, !v.rep.Live, fmt.Sprintf("missing: topics.json lists partition %d of topic %s", i, name),
					"Open creates it empty: the partition's records are gone unless the directory is restored from a backup")
			}
		}
	}
	return parts
}

// partitionDir is a partition directory: <topic>-<partition>.
type partitionDir struct {
	path      string
	topic     string
	partition int
}

// verifier holds the state of one Verify call.
type verifier struct {
	fsys        vfs.FS
	rep         *VerifyReport
	progress    func(done, total int64)
	done, total int64
}

// add records a finding.
func (v *verifier) add(file string, pos int64, damage bool, problem, recovery string) {
	v.rep.Findings = append(v.rep.Findings, VerifyFinding{File: file, Position: pos, Damage: damage, Problem: problem, Recovery: recovery})
}

// advance counts n more bytes of .log files checked.
func (v *verifier) advance(n int64) {
	v.done += n
	if v.progress != nil {
		v.progress(v.done, v.total)
	}
}

// logBytes is the size of the .log files in dir.
func (v *verifier) logBytes(dir string) int64 {
	names, _ := v.fsys.ReadDir(dir)
	var n int64
	for _, name := range names {
		if strings.HasSuffix(name, ".log") {
			if info, err := v.fsys.Stat(filepath.Join(dir, name)); err == nil {
				n += info.Size
			}
		}
	}
	return n
}

// checkRegistry checks topics.json and returns its topics (none if it is
// missing or damaged).
func (v *verifier) checkRegistry(dir string) map[string]registryEntry {
	if _, err := v.fsys.Stat(filepath.Join(dir, topicsFile)); err != nil {
		return nil
	}
	v.rep.Files++
	topics, err := readRegistry(v.fsys, dir)
	if err != nil {
		path := filepath.Join(dir, topicsFile)
		msg := damageReason(err)
		v.add(path, -1, true, msg, "Open refuses the store: restore topics.json from a backup, or rebuild it with strata.RebuildRegistry (keeps every topic's data and id, not its configuration)")
		return nil
	}
	return topics
}

// checkProducerIDs checks producer-ids.json: its version and checksum.
func (v *verifier) checkProducerIDs(dir string) {
	v.rep.Files++
	if _, err := readProducerIDs(v.fsys, dir); err != nil {
		msg := damageReason(err)
		v.add(filepath.Join(dir, producerIDsFile), -1, true, msg,
			"new producers and transactions fail until it is restored from a backup, or written with a next_producer_id above every producer id in the partitions")
	}
}

// damageReason shortens the error of a damaged store file ("strata:
// <path> is damaged (<reason>); <advice>") to "damaged: <reason>": the
// finding names the file and says what to do.
func damageReason(err error) string {
	msg := strings.TrimPrefix(err.Error(), "strata: ")
	if i, j := strings.Index(msg, " is damaged ("), strings.LastIndex(msg, "); "); i >= 0 && j > i {
		return "damaged: " + msg[i+len(" is damaged ("):j]
	}
	return msg
}

// readSmall reads a small file whole, reporting an error reading it as a
// finding; ok is false then.
func (v *verifier) readSmall(path string) ([]byte, bool) {
	data, err := vfs.ReadFile(v.fsys, path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			v.add(path, -1, true, fmt.Sprintf("cannot be read: %v", err), "")
		}
		return nil, false
	}
	v.rep.Files++
	return data, true
}
