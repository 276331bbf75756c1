// Package stratatest opens Strata stores for tests, as net/http/httptest
// starts servers: a store in t.TempDir(), with SyncNever (tests need no
// fsync), closed when the test ends.
package stratatest

import (
	"testing"

	"github.com/stratalog/strata"
)

// Open returns a new store in a temporary directory of t, with SyncNever and
// any other options given (opts may be nil), closed at the end of the test.
// It fails the test if the store cannot be opened or closed.
func Open(t testing.TB, opts *strata.Options) *strata.Store {
	t.Helper()
	o := strata.Options{}
	if opts != nil {
		o = *opts
	}
	if o.Sync == (strata.SyncPolicy{}) {
		o.Sync = strata.SyncNever
	}
	s, err := strata.Open(t.TempDir(), &o)
	if err != nil {
		t.Fatalf("stratatest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("stratatest: closing the store: %v", err)
		}
	})
	return s
}
