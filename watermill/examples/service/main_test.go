package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestService runs the example to completion, twice on one directory:
// the second run handles only its own four orders (each handler resumes at
// its group's commits), so each order is handled, retried and poisoned
// exactly as in the first.
func TestService(t *testing.T) {
	dir := t.TempDir()
	handled := `notified o-1: kettle reserved, 4 left
notified o-2: kettle reserved, 2 left
notified o-4: toaster reserved, 0 left
poisoned o-3: warehouse: no such item "unicorn" (from orders, handler reserve-stock)
warehouse calls: o-1 1 o-2 2 o-3 3 o-4 1
`
	for run, ends := range [][3]string{{"4", "3", "1"}, {"8", "6", "2"}} {
		var out strings.Builder
		require.NoError(t, runService(context.Background(), dir, &out), "run %d", run+1)
		require.Equal(t, handled+
			"group stock on orders: end "+ends[0]+", lag 0\n"+
			"group notify on stock.reserved: end "+ends[1]+", lag 0\n"+
			"group alerts on orders.poison: end "+ends[2]+", lag 0\n",
			out.String(), "run %d", run+1)
	}
}
