package strata_test

import (
	"context"
	"iter"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// TestClosedStore calls every exported method of a closed Store: each that
// returns an error returns ErrClosed (Close itself nil), with the store's
// prefix, and the methods that return no error are listed with what they
// do. A method missing from the table fails the test.
func TestClosedStore(t *testing.T) {
	ctx := context.Background()
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	require.NoError(t, s.CreateTopic("c", strata.TopicConfig{CleanupPolicy: strata.CleanupCompact}))
	_, err := s.AppendTo(ctx, "t", 0, strata.Record{Value: []byte("v")})
	require.NoError(t, err)
	require.NoError(t, s.Commit("g", "t", 0, 1, ""))
	p := s.Producer(strata.ProducerOptions{})
	require.NoError(t, p.Close())
	require.NoError(t, s.Close())

	first := func(seq iter.Seq2[strata.Record, error]) error {
		for _, err := range seq {
			return err
		}
		return nil
	}
	calls := map[string]func() error{
		"AbortedTxns":     func() error { _, err := s.AbortedTxns("t", 0, 0, 1); return err },
		"AppendBatch":     func() error { _, _, err := s.AppendBatch(ctx, "t", 0, nil); return err },
		"NewProducerID":   func() error { _, err := s.NewProducerID(); return err },
		"Append":          func() error { _, err := s.Append(ctx, "t", strata.Record{}); return err },
		"AppendIfEnd":     func() error { _, err := s.AppendIfEnd(ctx, "t", 0, 1, strata.Record{}); return err },
		"AppendIfLast":    func() error { _, err := s.AppendIfLast(ctx, "t", []byte("k"), 0, rec("k", "v")); return err },
		"AppendTo":        func() error { _, err := s.AppendTo(ctx, "t", 0, strata.Record{}); return err },
		"BeginTxn":        func() error { _, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"}); return err },
		"InitTxnProducer": func() error { _, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "x"}); return err },
		"AddTxnPartitions": func() error {
			return s.AddTxnPartitions(ctx, strata.TxnProducer{ID: "x"}, strata.TopicPartition{Topic: "t"})
		},
		"AppendTxnBatch":     func() error { _, _, err := s.AppendTxnBatch(ctx, strata.TxnProducer{ID: "x"}, "t", 0, nil); return err },
		"CommitTxnOffsets":   func() error { return s.CommitTxnOffsets(ctx, strata.TxnProducer{ID: "x"}, "g", nil) },
		"EndTxn":             func() error { return s.EndTxn(ctx, strata.TxnProducer{ID: "x"}, true) },
		"Transactions":       func() error { _, err := s.Transactions(ctx); return err },
		"Commit":             func() error { return s.Commit("g", "t", 0, 0, "") },
		"Compact":            func() error { _, err := s.Compact(ctx, "c"); return err },
		"Consumer":           func() error { _, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{}); return err },
		"CreateTopic":        func() error { return s.CreateTopic("new", strata.TopicConfig{}) },
		"DeleteGroupOffsets": func() error { return s.DeleteGroupOffsets("g") },
		"DeletePartitionOffsets": func() error {
			return s.DeletePartitionOffsets("g", []strata.TopicPartition{{Topic: "t"}})
		},
		"ClaimGroup": func() error { _, err := s.ClaimGroup("g"); return err },
		"HeartbeatGroup": func() error {
			_, err := s.HeartbeatGroup("g", strata.GroupHeartbeat{Topics: []string{"t"}})
			return err
		},
		"LeaveGroup":            func() error { return s.LeaveGroup("g", "g-1") },
		"CommitAsMember":        func() error { return s.CommitAsMember("g", "g-1", 1, nil) },
		"DeleteRecords":         func() error { return s.DeleteRecords("t", 0, 1) },
		"DeleteTopic":           func() error { return s.DeleteTopic("t") },
		"DescribeTopic":         func() error { _, err := s.DescribeTopic("t"); return err },
		"EnsureTopic":           func() error { return s.EnsureTopic("t", strata.TopicConfig{}) },
		"Get":                   func() error { _, err := s.Get("t", 0, 0); return err },
		"GetInto":               func() error { _, err := s.GetInto("t", 0, 0, nil); return err },
		"PartitionFor":          func() error { _, err := s.PartitionFor("t", []byte("k")); return err },
		"Scan":                  func() error { return first(s.Scan("t", 0, 0)) },
		"EnforceRetention":      func() error { _, err := s.EnforceRetention(ctx); return err },
		"EnforceTopicRetention": func() error { _, err := s.EnforceTopicRetention(ctx, "t"); return err },
		"Fetch":                 func() error { _, err := s.Fetch(ctx, "t", 0, 0, 1, time.Millisecond); return err },
		"Lag":                   func() error { _, err := s.Lag(ctx, "g", "t"); return err },
		"ListOffsets":           func() error { _, err := s.ListOffsets("t", 0, strata.Latest); return err },
		"Read":                  func() error { _, err := s.Read(ctx, "t", 0, 0, 1); return err },
		"Records":               func() error { return first(s.Records(ctx, "t", 0, 0)) },
		"ResetOffsets":          func() error { _, err := s.ResetOffsets("g", "t", strata.ToEarliest, false); return err },
		// A Producer of a closed store fails at its first Produce.
		"Producer": func() error {
			np := s.Producer(strata.ProducerOptions{})
			defer np.Close()
			return np.Produce(ctx, "t", strata.Record{}, nil)
		},
	}
	noError := map[string]func(t *testing.T){
		"Close":    func(t *testing.T) { require.NoError(t, s.Close(), "closing twice returns nil") },
		"Dir":      func(t *testing.T) { require.NotEmpty(t, s.Dir()) },
		"ReadOnly": func(t *testing.T) { require.False(t, s.ReadOnly()) },
		"Committed": func(t *testing.T) {
			_, ok := s.Committed("g", "t", 0)
			require.False(t, ok)
		},
		"GroupMembers":     func(t *testing.T) { require.Nil(t, s.GroupMembers("g")) },
		"PendingTxnOffset": func(t *testing.T) { require.False(t, s.PendingTxnOffset("g", "t", 0)) },
		// The lists and figures of a closed store are what it held.
		"Groups": func(t *testing.T) { s.Groups() },
		"Topics": func(t *testing.T) { require.Equal(t, []string{"c", "t"}, s.Topics()) },
		"Stats":  func(t *testing.T) { s.Stats() },
		// A View's reads are the store's.
		"View": func(t *testing.T) {
			v := s.View(strata.ReadCommitted)
			for name, err := range map[string]error{
				"Read":        second(v.Read(ctx, "t", 0, 0, 1)),
				"Fetch":       second(v.Fetch(ctx, "t", 0, 0, 1, 0)),
				"Get":         second(v.Get("t", 0, 0)),
				"GetInto":     second(v.GetInto("t", 0, 0, nil)),
				"ListOffsets": second(v.ListOffsets("t", 0, strata.Latest)),
				"Lag":         second(v.Lag(ctx, "g", "t")),
				"Scan":        first(v.Scan("t", 0, 0)),
				"Records":     first(v.Records(ctx, "t", 0, 0)),
				"ReadBatches": second(v.ReadBatches("t", 0, 0, 1<<10, nil)),
				"PinBatches":  second(v.PinBatches("t", 0, 0, 1<<10)),
				"Wait":        v.Wait(ctx, "t", 0, 0),
			} {
				require.ErrorIs(t, err, strata.ErrClosed, name)
				requireOnePrefix(t, err.Error())
			}
		},
	}
	// The same calls with bad input: the closed store is reported first.
	bad := map[string]func() error{
		"AbortedTxns":     func() error { _, err := s.AbortedTxns("__x", -1, 5, 1); return err },
		"AppendBatch":     func() error { _, _, err := s.AppendBatch(ctx, "", -1, []byte{1}); return err },
		"NewProducerID":   func() error { _, err := s.NewProducerID(); return err },
		"Append":          func() error { _, err := s.Append(ctx, ""); return err },
		"AppendIfEnd":     func() error { _, err := s.AppendIfEnd(ctx, "__x", -1, -1); return err },
		"AppendIfLast":    func() error { _, err := s.AppendIfLast(ctx, "__x", nil, -5, rec("j", "v")); return err },
		"AppendTo":        func() error { _, err := s.AppendTo(ctx, "__x", -1); return err },
		"BeginTxn":        func() error { _, err := s.BeginTxn(ctx, strata.TxnOptions{Timeout: -1}); return err },
		"InitTxnProducer": func() error { _, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{Timeout: -1}); return err },
		"AddTxnPartitions": func() error {
			return s.AddTxnPartitions(ctx, strata.TxnProducer{}, strata.TopicPartition{Topic: "__x", Partition: -1})
		},
		"AppendTxnBatch": func() error { _, _, err := s.AppendTxnBatch(ctx, strata.TxnProducer{}, "", -1, []byte{1}); return err },
		"CommitTxnOffsets": func() error {
			return s.CommitTxnOffsets(ctx, strata.TxnProducer{}, "", map[strata.TopicPartition]strata.OffsetAndMetadata{{Topic: "__x", Partition: -1}: {Offset: -1}})
		},
		"EndTxn": func() error { return s.EndTxn(ctx, strata.TxnProducer{ProducerID: -5}, true) },
		"Transactions": func() error {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := s.Transactions(cctx)
			return err
		},
		"Commit":             func() error { return s.Commit("", "__x", -1, -1, string(make([]byte, 5000))) },
		"Compact":            func() error { _, err := s.Compact(ctx, ""); return err },
		"Consumer":           func() error { _, err := s.Consumer("", nil, strata.ConsumerOptions{CloseTimeout: -1}); return err },
		"CreateTopic":        func() error { return s.CreateTopic("", strata.TopicConfig{Partitions: -1}) },
		"DeleteGroupOffsets": func() error { return s.DeleteGroupOffsets("") },
		"DeletePartitionOffsets": func() error {
			return s.DeletePartitionOffsets("", []strata.TopicPartition{{Topic: "t"}})
		},
		"ClaimGroup": func() error { _, err := s.ClaimGroup(""); return err },
		"HeartbeatGroup": func() error {
			_, err := s.HeartbeatGroup("", strata.GroupHeartbeat{Topics: []string{"__x"}})
			return err
		},
		"LeaveGroup": func() error { return s.LeaveGroup("", "") },
		"CommitAsMember": func() error {
			return s.CommitAsMember("", "", -1, map[strata.TopicPartition]strata.OffsetAndMetadata{{Topic: "__x", Partition: -1}: {Offset: -1}})
		},
		"DeleteRecords":         func() error { return s.DeleteRecords("", -1, -1) },
		"DeleteTopic":           func() error { return s.DeleteTopic(strata.ConsumerOffsetsTopic) },
		"DescribeTopic":         func() error { _, err := s.DescribeTopic(""); return err },
		"EnsureTopic":           func() error { return s.EnsureTopic("", strata.TopicConfig{Partitions: -1}) },
		"Get":                   func() error { _, err := s.Get("", -1, -1); return err },
		"GetInto":               func() error { _, err := s.GetInto("__x", -1, -1, nil); return err },
		"PartitionFor":          func() error { _, err := s.PartitionFor("__x", nil); return err },
		"Scan":                  func() error { return first(s.Scan("", -1, -1)) },
		"EnforceRetention":      func() error { _, err := s.EnforceRetention(ctx); return err },
		"EnforceTopicRetention": func() error { _, err := s.EnforceTopicRetention(ctx, ""); return err },
		"Fetch":                 func() error { _, err := s.Fetch(ctx, "", -1, -1, -1, -1); return err },
		"Lag":                   func() error { _, err := s.Lag(ctx, "", ""); return err },
		"ListOffsets":           func() error { _, err := s.ListOffsets("", -1, strata.OffsetSpec{}); return err },
		"Read":                  func() error { _, err := s.Read(ctx, "", -1, -1, -1); return err },
		"Records":               func() error { return first(s.Records(ctx, "", -1, -1)) },
		"ResetOffsets":          func() error { _, err := s.ResetOffsets("", "", strata.ResetSpec{}, false); return err },
		"Producer": func() error {
			np := s.Producer(strata.ProducerOptions{Compression: "zip"})
			defer np.Close()
			return np.Produce(ctx, "", strata.Record{}, nil)
		},
	}
	// Topic administration, and its View read.
	calls["AlterTopicConfig"] = func() error { return s.AlterTopicConfig("t", strata.TopicConfig{}) }
	bad["AlterTopicConfig"] = func() error { return s.AlterTopicConfig("__x", strata.TopicConfig{Partitions: -1}) }
	calls["CreatePartitions"] = func() error { return s.CreatePartitions("t", 2) }
	bad["CreatePartitions"] = func() error { return s.CreatePartitions("", -1) }
	calls["ListOffsetTime"] = func() error { _, err := s.ListOffsetTime("t", 0, strata.MaxTimestamp); return err }
	bad["ListOffsetTime"] = func() error { _, err := s.ListOffsetTime("", -1, strata.OffsetSpec{}); return err }
	// Consumer groups' descriptions and membership.
	calls["DescribeGroup"] = func() error { _, err := s.DescribeGroup(ctx, "g"); return err }
	bad["DescribeGroup"] = func() error { _, err := s.DescribeGroup(ctx, ""); return err }
	calls["ListGroups"] = func() error { _, err := s.ListGroups(); return err }
	bad["ListGroups"] = calls["ListGroups"]
	calls["PublishGroup"] = func() error { return s.PublishGroup("g", &strata.GroupMetadata{}) }
	bad["PublishGroup"] = func() error { return s.PublishGroup("", nil) }
	// The offsets topic, which takes no input.
	calls["EnsureOffsetsTopic"] = s.EnsureOffsetsTopic
	bad["EnsureOffsetsTopic"] = s.EnsureOffsetsTopic
	view := noError["View"]
	noError["View"] = func(t *testing.T) {
		view(t)
		_, err := s.View(strata.ReadCommitted).ListOffsetTime("t", 0, strata.MaxTimestamp)
		require.ErrorIs(t, err, strata.ErrClosed, "ListOffsetTime")
		requireOnePrefix(t, err.Error())
	}
	requireCovers(t, reflect.TypeOf(s), calls, noError)
	requireCovers(t, reflect.TypeOf(s), bad, noError)
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			require.ErrorIs(t, err, strata.ErrClosed)
			requireOnePrefix(t, err.Error())
			err = bad[name]()
			require.ErrorIs(t, err, strata.ErrClosed, "with bad input too")
			requireOnePrefix(t, err.Error())
		})
	}
	for name, check := range noError {
		t.Run(name, check)
	}
}

// TestClosedProducer calls every exported method of a closed Producer.
func TestClosedProducer(t *testing.T) {
	ctx := context.Background()
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	p := s.Producer(strata.ProducerOptions{})
	require.NoError(t, p.Close())
	badCodec := s.Producer(strata.ProducerOptions{Compression: "zip"})
	require.NoError(t, badCodec.Close())
	calls := map[string]func() error{
		"Produce": func() error {
			require.ErrorIs(t, badCodec.Produce(ctx, "__x", strata.Record{}, nil), strata.ErrClosed, "before the options and the input")
			return p.Produce(ctx, "t", strata.Record{}, nil)
		},
		"ProduceSync": func() error { _, err := p.ProduceSync(ctx, "t", strata.Record{}); return err },
	}
	noError := map[string]func(t *testing.T){
		"Close": func(t *testing.T) { require.NoError(t, p.Close(), "closing twice returns nil") },
		"Flush": func(t *testing.T) { require.NoError(t, p.Flush(ctx), "Close flushed") },
		// export_test.go's, for this package's tests only.
		"EncodedAhead": func(t *testing.T) { p.EncodedAhead() },
	}
	requireCovers(t, reflect.TypeOf(p), calls, noError)
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			require.ErrorIs(t, err, strata.ErrClosed)
			requireOnePrefix(t, err.Error())
		})
	}
	for name, check := range noError {
		t.Run(name, check)
	}
}

// TestProducerOfClosedStore checks that a Producer whose Store closed
// fails its records with ErrClosed: at Produce, or in their callbacks and
// Flush.
func TestProducerOfClosedStore(t *testing.T) {
	ctx := context.Background()
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	p := s.Producer(strata.ProducerOptions{Linger: time.Hour})
	var cbErr error
	require.NoError(t, p.Produce(ctx, "t", strata.Record{Value: []byte("a")}, func(_ strata.Position, err error) { cbErr = err }))
	require.NoError(t, p.Produce(ctx, "t", strata.Record{Value: []byte("b")}, nil))
	require.NoError(t, s.Close())
	err := p.Flush(ctx)
	require.ErrorIs(t, err, strata.ErrClosed)
	requireOnePrefix(t, err.Error())
	require.ErrorIs(t, cbErr, strata.ErrClosed)
	requireOnePrefix(t, cbErr.Error())
	err = p.Produce(ctx, "t", strata.Record{Value: []byte("c")}, nil)
	require.ErrorIs(t, err, strata.ErrClosed)
	require.NoError(t, p.Close(), "Flush returned the error")
	idle := s.Producer(strata.ProducerOptions{})
	require.ErrorIs(t, idle.Flush(ctx), strata.ErrClosed, "with nothing buffered too")
	require.NoError(t, idle.Close())
}

// requireCovers fails if an exported method of typ is in neither table, or
// a table names a method typ does not have.
func requireCovers(t *testing.T, typ reflect.Type, tables ...any) {
	t.Helper()
	listed := map[string]bool{}
	for _, table := range tables {
		for _, k := range reflect.ValueOf(table).MapKeys() {
			listed[k.String()] = true
		}
	}
	for i := range typ.NumMethod() {
		name := typ.Method(i).Name
		require.True(t, listed[name], "%s.%s is missing from the table", typ, name)
		delete(listed, name)
	}
	require.Empty(t, listed, "%s has no such methods", typ)
}

// second returns the error of a call's two results.
func second[T any](_ T, err error) error { return err }
