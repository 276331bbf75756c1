package broker_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// BenchmarkSecurity produces (kgo's defaults: idempotent, snappy) and
// then consumes records of 100 bytes with kgo over plain TCP, TLS, and
// TLS with SASL/SCRAM-SHA-256 (which costs a connection, not a record):
// ns/op is per record.
func BenchmarkSecurity(b *testing.B) {
	pki := newTestPKI(b)
	for _, tt := range []struct {
		name string
		opts broker.Options
		kgo  []kgo.Opt
	}{
		{"plaintext", broker.Options{}, nil},
		{"ssl", broker.Options{TLS: pki.serverConfig()}, []kgo.Opt{kgo.DialTLSConfig(pki.clientConfig())}},
		{"sasl_ssl", broker.Options{TLS: pki.serverConfig(), SASL: &broker.SASL{Users: testUsers}},
			[]kgo.Opt{kgo.DialTLSConfig(pki.clientConfig()), kgo.SASL(kgoMechanism(broker.MechanismSCRAMSHA256, "alice", testUsers["alice"]))}},
	} {
		for _, op := range []string{"produce", "consume"} {
			b.Run("security="+tt.name+"/op="+op, func(b *testing.B) {
				s, srv := serve(b, &tt.opts)
				require.NoError(b, s.CreateTopic(benchTopic, strata.TopicConfig{}))
				ctx := context.Background()
				value := make([]byte, 100)
				for i := range value {
					value[i] = "abcdefghij"[i%10]
				}
				opts := append([]kgo.Opt{kgo.SeedBrokers(srv.Addr().String())}, tt.kgo...)
				p, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic(benchTopic), kgo.MaxBufferedRecords(1<<20))...)
				require.NoError(b, err)
				defer p.Close()
				b.SetBytes(int64(len(value)))
				var stop func()
				if op == "produce" {
					stop = measure(b)
				}
				for range b.N {
					p.Produce(ctx, &kgo.Record{Value: value}, nil)
				}
				require.NoError(b, p.Flush(ctx))
				if op == "produce" {
					stop()
					return
				}
				stop = measure(b)
				cl, err := kgo.NewClient(append(opts, kgo.ConsumeTopics(benchTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
				require.NoError(b, err)
				defer cl.Close()
				for n := 0; n < b.N; {
					fs := cl.PollFetches(ctx)
					fs.EachError(func(_ string, _ int32, err error) { b.Fatal(err) })
					n += fs.NumRecords()
				}
				stop()
			})
		}
	}
}
