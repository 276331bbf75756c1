package txn_test

import (
	"fmt"
	"time"

	"github.com/stratalog/strata/txn"
)

func Example() {
	key := txn.AppendKey(nil, "orders-relay")
	value := txn.AppendValue(nil, txn.Metadata{
		ProducerID: 12, ProducerEpoch: 0, Timeout: time.Minute, State: txn.PrepareCommit,
		Partitions: []txn.Partition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}},
	})
	id, m, _, err := txn.Decode(key, value)
	fmt.Println(id, m.State, m.Partitions, err)
	fmt.Println(txn.CompleteCommit.CanFollow(m.State), txn.CompleteAbort.CanFollow(m.State))
	// Output:
	// orders-relay PrepareCommit [{orders 0} {orders 1}] <nil>
	// true false
}
