package stratatest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// exampleT stands in for a test's *testing.T, which an Example has not:
// it runs the cleanups at end, as a test does when it ends.
type exampleT struct {
	testing.TB
	cleanups []func()
}

func (t *exampleT) Helper()                   {}
func (t *exampleT) Cleanup(f func())          { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (t *exampleT) Errorf(f string, a ...any) { fmt.Printf(f+"\n", a...) }

func (t *exampleT) TempDir() string {
	dir, err := os.MkdirTemp("", "stratatest-example-")
	if err != nil {
		panic(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (t *exampleT) end() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// A test's store, in memory: no file is written, and the store is closed
// when the test ends.
func ExampleOpen() {
	t := &exampleT{} // in a test: its t
	defer t.end()

	s := stratatest.Open(t, nil)
	if err := s.CreateTopic("orders", strata.TopicConfig{}); err != nil {
		t.Fatalf("%v", err)
	}
	ctx := context.Background()
	if _, err := s.AppendTo(ctx, "orders", 0, strata.Record{Value: []byte("tea")}); err != nil {
		t.Fatalf("%v", err)
	}
	r, err := s.Get("orders", 0, 0)
	if err != nil {
		t.Fatalf("%v", err)
	}
	fmt.Println(string(r.Value), s.Dir())

	// Output:
	// tea /store
}

// A test's store on the real file system, for a test that looks at its
// files.
func ExampleOpenOnDisk() {
	t := &exampleT{} // in a test: its t
	defer t.end()

	s := stratatest.OpenOnDisk(t, nil)
	if err := s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}); err != nil {
		t.Fatalf("%v", err)
	}
	for _, part := range []string{"orders-0", "orders-1"} {
		fi, err := os.Stat(filepath.Join(s.Dir(), part))
		fmt.Println(part, err == nil && fi.IsDir())
	}

	// Output:
	// orders-0 true
	// orders-1 true
}
