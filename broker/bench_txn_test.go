package broker_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkTxnProduce runs kgo transactions of 100 records of 100 bytes,
// each committed (InitProducerId once, then AddPartitionsToTxn, Produce
// and EndTxn per transaction), beside the same records produced
// idempotent and flushed (mode=plain), against Strata's broker (store on
// disk, SyncEvery): ns/op is per transaction. kfake is left out: the
// version this module requires answers some of these EndTxn requests
// with INVALID_TXN_STATE.
func BenchmarkTxnProduce(b *testing.B) {
	const perTxn = 100
	for _, server := range []string{"strata"} {
		for _, mode := range []string{"txn", "plain"} {
			b.Run(fmt.Sprintf("server=%s/mode=%s", server, mode), func(b *testing.B) {
				addr := benchServers(b)[server]
				opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(benchTopic)}
				if mode == "txn" {
					opts = append(opts, kgo.TransactionalID("bench"))
				}
				cl, err := kgo.NewClient(opts...)
				require.NoError(b, err)
				defer cl.Close()
				value := make([]byte, 100)
				ctx := context.Background()
				b.SetBytes(perTxn * int64(len(value)))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if mode == "txn" {
						require.NoError(b, cl.BeginTransaction())
					}
					for range perTxn {
						cl.Produce(ctx, &kgo.Record{Value: value}, nil)
					}
					if mode == "txn" {
						require.NoError(b, cl.EndTransaction(ctx, kgo.TryCommit))
					} else {
						require.NoError(b, cl.Flush(ctx))
					}
				}
			})
		}
	}
}
