package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/topic"
)

// fillStoreCmd is the script command
//
//	fillstore TOPIC RECORDS [partitions=N] [keys=N] [age=DURATION] [name=value ...]
//
// which creates TOPIC in $STRATA_DIR, with Kafka's topic configs
// name=value (segment.bytes=1024, cleanup.policy=compact, ...), and
// appends RECORDS records to each partition, one a batch, keyed k0, k1,
// ... k<keys-1> in turn (keys=0: no keys), valued v<i>, stamped age ago.
func fillStoreCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! fillstore")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: fillstore TOPIC RECORDS [partitions=N] [keys=N] [age=DURATION] [name=value ...]")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	cfg := strata.TopicConfig{}
	keys, age := 0, time.Duration(0)
	for _, kv := range args[2:] {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			ts.Fatalf("fillstore: %q is not name=value", kv)
		}
		switch name {
		case "partitions":
			cfg.Partitions, err = strconv.Atoi(value)
		case "keys":
			keys, err = strconv.Atoi(value)
		case "age":
			age, err = time.ParseDuration(value)
		default:
			err = topic.SetKafkaConfig(&cfg, name, value)
		}
		ts.Check(err)
	}
	s, err := strata.Open(ts.Getenv("STRATA_DIR"), &strata.Options{RetentionCheckInterval: -1, CleanerInterval: -1})
	ts.Check(err)
	defer func() { ts.Check(s.Close()) }()
	ts.Check(s.CreateTopic(args[0], cfg))
	d, err := s.DescribeTopic(args[0])
	ts.Check(err)
	stamp := time.Now().Add(-age)
	for p := range d.Partitions {
		for i := range n {
			r := strata.Record{Value: fmt.Appendf(nil, "v%d", i), Timestamp: stamp}
			if keys > 0 {
				r.Key = fmt.Appendf(nil, "k%d", i%keys)
			}
			_, err := s.AppendTo(context.Background(), args[0], p, r)
			ts.Check(err)
		}
	}
}
