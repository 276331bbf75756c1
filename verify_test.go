package strata_test

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/log"
)

// verifyStore writes a closed store in a new directory: topic events, one
// partition of several 4 KiB segments with indexes, and returns the
// directory and the partition's segment bases.
func verifyStore(t *testing.T) (string, []int64) {
	t.Helper()
	dir := t.TempDir()
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever, CleanerInterval: -1, RetentionCheckInterval: -1})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{SegmentBytes: 4096, IndexIntervalBytes: 256}))
	ts := time.Now().Add(-time.Hour)
	for i := range 300 {
		r := rec(fmt.Sprint("key-", i), fmt.Sprint("value-", i))
		r.Timestamp = ts.Add(time.Duration(i) * time.Millisecond)
		_, err := s.AppendTo(ctx, "events", 0, r)
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	bases := partitionSegmentBases(t, filepath.Join(dir, "events-0"))
	require.Greater(t, len(bases), 3)
	return dir, bases
}

func segFile(dir string, base int64, suffix string) string {
	return filepath.Join(dir, "events-0", fmt.Sprintf("%020d%s", base, suffix))
}

// TestVerifyClean: a closed store, and a Kafka partition directory, have
// no findings.
func TestVerifyClean(t *testing.T) {
	dir, bases := verifyStore(t)
	rep, err := strata.Verify(dir, nil)
	require.NoError(t, err)
	require.Empty(t, rep.Findings)
	require.True(t, rep.Clean)
	require.False(t, rep.Live)
	require.Equal(t, len(bases), rep.Segments)
	require.EqualValues(t, 300, rep.Batches)

	kdir := t.TempDir()
	p := kafkadir.New(filepath.Join(kdir, "orders-0"))
	p.IndexIntervalBytes = 200
	ts := time.UnixMilli(1_700_000_000_000)
	for off := int64(0); off < 200; off += 10 {
		p.Append(kafkadir.Batch(off, off+9, kafkadir.Records(off, 10, ts), kafkadir.Opts{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Codec: log.Compression(off / 10 % 5)}))
	}
	p.Roll(200)
	p.Append(kafkadir.Batch(200, 204, kafkadir.Records(200, 5, ts), kafkadir.Opts{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}))
	_, err = p.Write(kafkadir.Files{TopicID: [16]byte{1, 2, 3}, Extras: true})
	require.NoError(t, err)
	rep, err = strata.Verify(kdir, nil)
	require.NoError(t, err)
	require.Empty(t, rep.Findings)
	require.EqualValues(t, 21, rep.Batches)
}

// TestVerifyDamage injects each kind of damage into a closed store and
// checks that Verify reports it with its file and position, and changes
// nothing.
func TestVerifyDamage(t *testing.T) {
	for _, tc := range []struct {
		name string
		// damage changes the directory and returns the file and position
		// the finding names, and a part of its problem.
		damage  func(t *testing.T, dir string, bases []int64) (string, int64, string)
		recover string // a part of the finding's recovery
	}{
		{"flipped crc byte", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := segFile(dir, b[1], ".log")
			pos := batchStart(t, f, 3)
			flip(t, f, pos+17)
			return f, pos, "crc"
		}, "recovery cuts the segment at position"},
		{"flipped record byte", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := segFile(dir, b[0], ".log")
			pos := batchStart(t, f, 2)
			flip(t, f, pos+70)
			return f, pos, "crc"
		}, "3920 bytes would be dropped (48 batches, offsets 2 to 49)"},
		{"torn tail", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := segFile(dir, b[len(b)-1], ".log")
			pos := batchStart(t, f, 1)
			truncate(t, f, pos+30)
			return f, pos, "torn tail"
		}, "torn tail: 30 bytes after position"},
		{"torn batch", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := segFile(dir, b[len(b)-1], ".log")
			pos := batchStart(t, f, 1)
			truncate(t, f, pos+70)
			return f, pos, "torn tail"
		}, "torn tail: 70 bytes after position 84 would be cut (a torn batch, offset 292)"},
		{"offset below the next", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := segFile(dir, b[1], ".log")
			pos := batchStart(t, f, 2)
			writeAt(t, f, pos, binary.BigEndian.AppendUint64(nil, uint64(b[1])))
			return f, pos, "is below the next offset"
		}, ""},
		{"index entry past the log", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := segFile(dir, b[1], ".index")
			writeAt(t, f, 8+4, binary.BigEndian.AppendUint32(nil, 1<<20))
			return f, 8, "past the end of the log"
		}, "rebuilds it from the log"},
		{"index entry not at a batch", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := segFile(dir, b[1], ".index")
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			pos := binary.BigEndian.Uint32(data[4:])
			writeAt(t, f, 4, binary.BigEndian.AppendUint32(nil, pos+1))
			return f, 0, "not the start of a batch"
		}, ""},
		{"index of a torn size", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := segFile(dir, b[0], ".index")
			info, err := os.Stat(f)
			require.NoError(t, err)
			truncate(t, f, info.Size()-3)
			return f, info.Size() - 8, "not a multiple of the 8-byte entry"
		}, ""},
		{"time index timestamp", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := segFile(dir, b[2], ".timeindex")
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			writeAt(t, f, 12, binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(data[12:])+1))
			return f, 12, "largest timestamp up to offset"
		}, ""},
		{"bad topics.json checksum", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := filepath.Join(dir, "topics.json")
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(f, []byte(strings.Replace(string(data), `"segment_bytes": 4096`, `"segment_bytes": 4097`, 1)), 0o644))
			return f, -1, "checksum"
		}, "RebuildRegistry"},
		{"bad producer-ids.json checksum", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := filepath.Join(dir, "producer-ids.json")
			require.NoError(t, os.WriteFile(f, []byte(`{"version":1,"next_producer_id":1000,"crc32c":7}`+"\n"), 0o644))
			return f, -1, "checksum"
		}, "restored from a backup"},
		{"garbled recovery-point", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := filepath.Join(dir, "events-0", "recovery-point")
			require.NoError(t, os.WriteFile(f, []byte("1O0"), 0o644))
			return f, -1, "not an offset"
		}, "recovers from the first segment"},
		{"damaged snapshot", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := filepath.Join(dir, "events-0", fmt.Sprintf("%020d.snapshot", 77))
			snap := kafkadir.Snapshot([]kafkadir.ProducerEntry{{ProducerID: 1, LastOffset: 5}})
			snap[20] ^= 1
			require.NoError(t, os.WriteFile(f, snap, 0o644))
			return f, 2, "crc"
		}, "rebuilds the producer state"},
		{"snapshot entry Open refuses", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := filepath.Join(dir, "events-0", fmt.Sprintf("%020d.snapshot", 77))
			snap := kafkadir.Snapshot([]kafkadir.ProducerEntry{{ProducerID: 1, LastOffset: 5}, {ProducerID: -2, LastOffset: 6}})
			require.NoError(t, os.WriteFile(f, snap, 0o644))
			return f, 10 + 46, "entry of producer -2"
		}, "rebuilds the producer state"},
		{"bad partition.metadata", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			f := filepath.Join(dir, "events-0", "partition.metadata")
			require.NoError(t, os.WriteFile(f, []byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"), 0o644))
			return f, -1, "names topic id"
		}, "writes it again"},
		{"missing partition directory", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			require.NoError(t, os.Rename(filepath.Join(dir, "events-0"), filepath.Join(dir, "elsewhere")))
			return filepath.Join(dir, "events-0"), -1, "missing: topics.json lists partition 0 of topic events"
		}, "Open creates it empty"},
		{"overlapping segments", func(t *testing.T, dir string, b []int64) (string, int64, string) {
			from, to := segFile(dir, b[2], ".log"), segFile(dir, b[2]-1, ".log")
			require.NoError(t, os.Rename(from, to))
			for _, s := range []string{".index", ".timeindex"} {
				_ = os.Remove(segFile(dir, b[2], s))
			}
			return to, -1, "overlap"
		}, "Open refuses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, bases := verifyStore(t)
			file, pos, problem := tc.damage(t, dir, bases)
			before := dirHashes(t, dir)
			rep, err := strata.Verify(dir, &strata.VerifyOptions{})
			require.NoError(t, err)
			require.True(t, rep.Damaged(), "findings: %+v", rep.Findings)
			var found *strata.VerifyFinding
			for i, f := range rep.Findings {
				if f.File == file && f.Position == pos && f.Damage && strings.Contains(f.Problem, problem) {
					found = &rep.Findings[i]
				}
			}
			require.NotNil(t, found, "a finding for %s at %d with %q; findings: %+v", file, pos, problem, rep.Findings)
			require.Contains(t, found.Recovery, tc.recover)
			require.Equal(t, before, dirHashes(t, dir), "Verify changed nothing")
		})
	}
}

// TestVerifyCrashed: without the clean-shutdown marker a torn tail is
// still damage (the directory is not live); preallocated zeros are a
// note.
func TestVerifyCrashed(t *testing.T) {
	dir, bases := verifyStore(t)
	require.NoError(t, os.Remove(filepath.Join(dir, ".clean-shutdown")))
	f := segFile(dir, bases[len(bases)-1], ".log")
	info, err := os.Stat(f)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(f, info.Size()+1000))
	rep, err := strata.Verify(dir, nil)
	require.NoError(t, err)
	require.False(t, rep.Damaged(), "findings: %+v", rep.Findings)
	require.Len(t, rep.Findings, 1)
	require.Equal(t, strata.VerifyFinding{File: f, Position: info.Size(), Problem: "1000 zero bytes after the last batch, reserved ahead of appends", Recovery: "Open trims them"}, rep.Findings[0])

	truncate(t, f, info.Size()-1)
	rep, err = strata.Verify(dir, nil)
	require.NoError(t, err)
	require.True(t, rep.Damaged())
	require.Contains(t, rep.Findings[0].Recovery, "torn tail:")
}

// TestVerifyTimestamps: a batch whose first timestamp is above its max
// (written so, its CRC intact) is a note with its position.
func TestVerifyTimestamps(t *testing.T) {
	dir := t.TempDir()
	ts := time.UnixMilli(1_700_000_000_000)
	p := kafkadir.New(filepath.Join(dir, "orders-0"))
	noPID := kafkadir.Opts{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	good := kafkadir.Batch(0, 1, kafkadir.Records(0, 2, ts), noPID)
	recs := kafkadir.Records(2, 2, ts)
	recs[0].Timestamp, recs[1].Timestamp = ts.Add(time.Second), ts
	bad := kafkadir.Batch(2, 3, recs, noPID)
	h, err := log.ReadHeader(bad)
	require.NoError(t, err)
	// The max timestamp set below the first one, and the CRC to match.
	binary.BigEndian.PutUint64(bad[35:], uint64(h.BaseTimestamp-5))
	binary.BigEndian.PutUint32(bad[17:], crc32.Checksum(bad[21:], crc32.MakeTable(crc32.Castagnoli)))
	p.Append(good)
	p.Append(bad)
	_, err = p.Write(kafkadir.Files{})
	require.NoError(t, err)
	rep, err := strata.Verify(dir, nil)
	require.NoError(t, err)
	require.False(t, rep.Damaged())
	require.Len(t, rep.Findings, 1, "%+v", rep.Findings)
	f := rep.Findings[0]
	require.Equal(t, int64(len(good)), f.Position)
	require.Contains(t, f.Problem, "batch at offset 2: its first timestamp 1700000001000 is above its max timestamp 1700000000995")
}

// TestVerifyUnknownTopic: a topic with no partition is ErrUnknownTopic.
func TestVerifyUnknownTopic(t *testing.T) {
	dir, _ := verifyStore(t)
	_, err := strata.Verify(dir, &strata.VerifyOptions{Topic: "nope"})
	require.ErrorIs(t, err, strata.ErrUnknownTopic)
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "events-0")))
	rep, err := strata.Verify(dir, &strata.VerifyOptions{Topic: "events"})
	require.NoError(t, err, "a topic topics.json has is known without its directories")
	require.True(t, rep.Damaged())
	_, err = strata.Verify(filepath.Join(dir, "missing"), nil)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// batchStart returns the position of the n-th batch of a .log file.
func batchStart(t *testing.T, path string, n int) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	it := log.NewBatchIter(data)
	for i := 0; it.Next(); i++ {
		if i == n {
			return int64(it.Pos())
		}
	}
	t.Fatalf("%s has fewer than %d batches", path, n+1)
	return 0
}

func flip(t *testing.T, path string, pos int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[pos] ^= 0x40
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func writeAt(t *testing.T, path string, pos int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b, pos)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	require.NoError(t, os.Truncate(path, size))
}

// dirHashes returns every file's contents under dir, by path.
func dirHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		out[path] = fmt.Sprintf("%x", data)
		return err
	}))
	return out
}
