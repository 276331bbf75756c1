package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/log"
)

// FuzzDump dumps arbitrary bytes as each kind of file dump reads, with
// every option, as text and as JSON: it never panics, and fails only for
// damage (an exit status of its own), never with another error.
func FuzzDump(f *testing.F) {
	ts := time.UnixMilli(1_700_000_000_000)
	key, value := group.EncodeCommit(group.Commit{Group: "g", Topic: "t", Offset: 5, CommitTime: ts})
	commit := kafkadir.Batch(0, 0, []log.Record{{Offset: 0, Timestamp: ts, Key: key, Value: value}}, kafkadir.Opts{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1})
	f.Add(append(kafkadir.Legacy(0, 0, ts, nil, []byte("v")), commit...))
	f.Add(kafkadir.Control(3, true, 7, 0, ts))
	f.Add(kafkadir.Snapshot([]kafkadir.ProducerEntry{{ProducerID: 3, LastOffset: 5, LastSequence: 2, OffsetDelta: 4}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		var names []string
		for _, suffix := range []string{".log", ".index", ".timeindex", ".snapshot", ".txnindex"} {
			names = append(names, filepath.Join(dir, "00000000000000000000"+suffix))
		}
		names = append(names, filepath.Join(dir, "partition.metadata"))
		for _, name := range names {
			require.NoError(t, os.WriteFile(name, data, 0o644))
		}
		for _, output := range []string{"table", "json"} {
			for _, flags := range []dumpFlags{
				{deep: true, printData: true, offsets: true},
				{deep: true, printData: true, txnLog: true},
				{deep: true, printData: true},
				{sanity: true},
			} {
				a := &app{output: output, stdout: io.Discard, stderr: io.Discard}
				d := &dumper{a: a, flags: flags, out: io.Discard}
				for _, name := range names {
					require.NoError(t, d.dumpFile(name))
				}
				d.printErrors()
			}
		}
	})
}
