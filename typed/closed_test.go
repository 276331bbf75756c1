package typed_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
	"github.com/stratalog/strata/typed"
)

// TestClosed calls every exported method of a Producer over a closed
// strata.Producer, and of a Reader of a closed Store: those that return an
// error return strata.ErrClosed.
func TestClosed(t *testing.T) {
	ctx := context.Background()
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	_, err := s.Append(ctx, "t", kv("k", "v"))
	require.NoError(t, err)
	p := s.Producer(strata.ProducerOptions{})
	tp := typed.NewProducer(p, typed.String(), typed.String())
	r := typed.NewReader(s, "t", 0, 1, typed.String(), typed.String())
	require.NoError(t, p.Close())
	require.NoError(t, s.Close())

	calls := map[string]func() error{
		"Produce": func() error { return tp.Produce(ctx, "t", "k", "v", nil) },
		"ProduceRecord": func() error {
			return tp.ProduceRecord(ctx, "t", typed.Record[string, string]{Key: "k", Value: "v"}, nil)
		},
		"Next": func() error { _, err := r.Next(ctx); return err },
		"All": func() error {
			for _, err := range r.All(ctx) {
				return err
			}
			return nil
		},
	}
	noError := map[string]func(t *testing.T){
		"Offset":    func(t *testing.T) { require.EqualValues(t, 1, r.Offset()) },
		"SetOffset": func(t *testing.T) { r.SetOffset(1) }, // where it is: Offset runs before or after
	}
	listed := map[string]bool{}
	for name := range calls {
		listed[name] = true
	}
	for name := range noError {
		listed[name] = true
	}
	for _, typ := range []reflect.Type{reflect.TypeOf(tp), reflect.TypeOf(r)} {
		for i := range typ.NumMethod() {
			require.True(t, listed[typ.Method(i).Name], "%s.%s is missing from the table", typ, typ.Method(i).Name)
		}
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			require.ErrorIs(t, call(), strata.ErrClosed)
		})
	}
	for name, check := range noError {
		t.Run(name, check)
	}
}
