package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/log"
)

// scriptTime is the first record's timestamp of the stores the scripts
// write: 2025-12-01T14:40:00Z.
var scriptTime = time.UnixMilli(1_764_600_000_000)

// mkstore DIR TOPIC N [SEGMENT_BYTES]: a closed store in DIR with topic
// TOPIC (one partition) holding N records, key k<i%7>, value
// {"order":i}, 2 ms apart, one batch each; the group billing commits
// offset N/2, the group loaders' membership is published, and a
// transaction commits two records to TOPIC.
func cmdMkstore(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: mkstore DIR TOPIC N [SEGMENT_BYTES]")
	}
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	cfg := strata.TopicConfig{SegmentBytes: 8192}
	if len(args) > 3 {
		cfg.SegmentBytes, err = strconv.ParseInt(args[3], 10, 64)
		ts.Check(err)
	}
	dir, name := ts.MkAbs(args[0]), args[1]
	s, err := strata.Open(dir, &strata.Options{Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return scriptTime.Add(time.Hour) }, CleanerInterval: -1, RetentionCheckInterval: -1})
	ts.Check(err)
	ts.Check(s.CreateTopic(name, cfg))
	ctx := context.Background()
	for i := range n {
		_, err := s.AppendTo(ctx, name, 0, strata.Record{Key: []byte(fmt.Sprint("k", i%7)), Value: []byte(fmt.Sprintf(`{"order":%d}`, i)),
			Timestamp: scriptTime.Add(time.Duration(2*i) * time.Millisecond)})
		ts.Check(err)
	}
	ts.Check(s.Commit("billing", name, 0, int64(n/2), "nightly"))
	tp := []group.TopicPartition{{Topic: name, Partition: 0}}
	ts.Check(s.PublishGroup("loaders", &strata.GroupMetadata{ProtocolType: group.ConsumerProtocolType, Generation: 3, Protocol: "range",
		Leader: "loader-1", StateTime: scriptTime, Members: []strata.GroupMemberMetadata{{
			MemberID: "loader-1", ClientID: "etl", ClientHost: "/10.0.0.7", RebalanceTimeout: time.Minute, SessionTimeout: 45 * time.Second,
			Subscription: group.AppendSubscription(nil, []string{name}, nil), Assignment: group.AppendAssignment(nil, tp),
		}}}))
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "loader"})
	ts.Check(err)
	ts.Check(tx.AppendTo(ctx, name, 0, strata.Record{Value: []byte("in-txn-1"), Timestamp: scriptTime}, strata.Record{Value: []byte("in-txn-2"), Timestamp: scriptTime}))
	ts.Check(tx.Commit(ctx))
	ts.Check(s.Close())
}

// kafkadir DIR: a partition directory DIR/orders-0 as a Kafka broker
// writes it: legacy messages of magic 0 and 1, batches in every codec, a
// transaction aborted and one committed (control batches, the .txnindex
// entry), two segments, a producer snapshot and partition.metadata.
func cmdKafkadir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: kafkadir DIR")
	}
	p := kafkadir.New(filepath.Join(ts.MkAbs(args[0]), "orders-0"))
	p.IndexIntervalBytes = 300
	noPID := kafkadir.Opts{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	p.Append(kafkadir.Legacy(0, 0, scriptTime, []byte("k0"), []byte("legacy v0")))
	p.Append(kafkadir.Legacy(1, 1, scriptTime, nil, []byte("legacy v1")))
	for i, c := range []log.Compression{log.None, log.Gzip, log.Snappy, log.LZ4, log.Zstd} {
		o := noPID
		o.Codec = c
		base := int64(2 + 3*i)
		p.Append(kafkadir.Batch(base, base+2, kafkadir.Records(base, 3, scriptTime.Add(time.Duration(base)*time.Millisecond)), o))
	}
	p.Roll(17)
	txn := kafkadir.Opts{ProducerID: 4000, ProducerEpoch: 0, BaseSequence: 0, Transactional: true}
	p.Append(kafkadir.Batch(17, 18, kafkadir.Records(17, 2, scriptTime.Add(20*time.Millisecond)), txn))
	p.Append(kafkadir.Control(19, false, 4000, 0, scriptTime.Add(21*time.Millisecond)))
	p.Abort(4000, 17, 19, 17)
	txn.BaseSequence = 2
	p.Append(kafkadir.Batch(20, 21, kafkadir.Records(20, 2, scriptTime.Add(22*time.Millisecond)), txn))
	p.Append(kafkadir.Control(22, true, 4000, 0, scriptTime.Add(23*time.Millisecond)))
	_, err := p.Write(kafkadir.Files{TopicID: [16]byte{0x6d, 0x1a, 7, 3, 0x21}, Extras: true})
	ts.Check(err)
	snap := kafkadir.Snapshot([]kafkadir.ProducerEntry{{ProducerID: 4000, Epoch: 0, LastSequence: 3, LastOffset: 21, OffsetDelta: 1,
		Timestamp: scriptTime.Add(22 * time.Millisecond).UnixMilli(), CoordinatorEpoch: 7, TxnFirstOffset: -1}})
	ts.Check(os.WriteFile(filepath.Join(ts.MkAbs(args[0]), "orders-0", "00000000000000000023.snapshot"), snap, 0o644))
}

// flipbyte FILE POS: flips the low bit of the byte at POS.
func cmdFlipbyte(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: flipbyte FILE POS")
	}
	pos, err := strconv.Atoi(args[1])
	ts.Check(err)
	path := ts.MkAbs(args[0])
	data, err := os.ReadFile(path)
	ts.Check(err)
	data[pos] ^= 1
	ts.Check(os.WriteFile(path, data, 0o644))
}

// cutbytes FILE N: cuts the last N bytes of FILE, as a torn write leaves
// it.
func cmdCutbytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cutbytes FILE N")
	}
	n, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	path := ts.MkAbs(args[0])
	info, err := os.Stat(path)
	ts.Check(err)
	ts.Check(os.Truncate(path, info.Size()-n))
}

// tornappend FILE N: appends the first N bytes of FILE to its end, as a
// write still under way, or torn by a crash, leaves a batch.
func cmdTornappend(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tornappend FILE N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	path := ts.MkAbs(args[0])
	data, err := os.ReadFile(path)
	ts.Check(err)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	ts.Check(err)
	_, err = f.Write(data[:n])
	ts.Check(err)
	ts.Check(f.Close())
}

// replacein FILE OLD NEW: replaces the first OLD in FILE with NEW.
func cmdReplacein(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: replacein FILE OLD NEW")
	}
	path := ts.MkAbs(args[0])
	data, err := os.ReadFile(path)
	ts.Check(err)
	if !strings.Contains(string(data), args[1]) {
		ts.Fatalf("%s holds no %q", args[0], args[1])
	}
	ts.Check(os.WriteFile(path, []byte(strings.Replace(string(data), args[1], args[2], 1)), 0o644))
}

// hashes DIR: prints the SHA-256 of every file under DIR, by path, to
// compare before and after a command with cmp.
func cmdHashes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: hashes DIR")
	}
	root := ts.MkAbs(args[0])
	var lines []string
	ts.Check(filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		lines = append(lines, fmt.Sprintf("%x %s", sha256.Sum256(data), rel))
		return err
	}))
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(ts.Stdout(), l)
	}
}

// held are the stores holdlock keeps open, by script.
var held sync.Map // *testscript.TestScript → *strata.Store

// holdlock DIR: opens the store in DIR in the test process and keeps it
// open (its lock held) until releaselock or the end of the script, so that
// strata, run by exec in a process of its own, finds it locked and live.
func cmdHoldlock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: holdlock DIR")
	}
	s, err := strata.Open(ts.MkAbs(args[0]), &strata.Options{Logger: slog.New(slog.DiscardHandler), CleanerInterval: -1, RetentionCheckInterval: -1})
	ts.Check(err)
	held.Store(ts, s)
	ts.Defer(func() { cmdReleaselock(ts, false, nil) })
}

// releaselock: closes the store holdlock opened.
func cmdReleaselock(ts *testscript.TestScript, neg bool, _ []string) {
	if s, ok := held.LoadAndDelete(ts); ok {
		ts.Check(s.(*strata.Store).Close())
	}
}
