package strata_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/stratalog/strata"
)

// A second process (here a second Store) reads a directory that a running
// service owns: read-only, it takes no lock, writes nothing, and follows
// what the owner appends.
func ExampleStore_ReadOnly() {
	dir, _ := os.MkdirTemp("", "strata-readonly")
	defer os.RemoveAll(dir)
	owner, _ := strata.Open(dir, nil)
	defer owner.Close()
	_ = owner.CreateTopic("events", strata.TopicConfig{})
	ctx := context.Background()
	_, _ = owner.AppendTo(ctx, "events", 0, strata.Record{Value: []byte("first")})

	reader, err := strata.Open(dir, &strata.Options{ReadOnly: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reader.Close()
	fmt.Println("read-only:", reader.ReadOnly())

	_, _ = owner.AppendTo(ctx, "events", 0, strata.Record{Value: []byte("second")})
	recs, _ := reader.Read(ctx, "events", 0, 0, 10)
	for _, r := range recs {
		fmt.Println(r.Offset, string(r.Value))
	}
	err = reader.CreateTopic("other", strata.TopicConfig{})
	fmt.Println(errors.Is(err, strata.ErrReadOnly))
	// Output:
	// read-only: true
	// 0 first
	// 1 second
	// true
}
