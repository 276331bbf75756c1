package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stratalog/strata"
	"github.com/stretchr/testify/require"
)

// benchLines is n keyed lines of about 110 bytes.
func benchLines(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "key%d:%0100d\n", i%1000, i)
	}
	return b.Bytes()
}

// BenchmarkProduce compares produce (lines batched per partition, each
// batch encoded and appended with AppendBatch) with the same lines given
// to a strata.Producer, on 6 partitions.
func BenchmarkProduce(b *testing.B) {
	const lines = 100000
	input := benchLines(lines)
	b.Run("cmd=produce", func(b *testing.B) {
		b.SetBytes(int64(len(input)))
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			dir := b.TempDir()
			var out bytes.Buffer
			a := &app{stdin: &out, stdout: &out, stderr: &out, ctx: context.Background()}
			require.Equal(b, exitOK, a.run([]string{"--dir", dir, "topics", "create", "t", "--partitions", "6"}))
			a.stdin = bytes.NewReader(input)
			b.StartTimer()
			require.Equal(b, exitOK, a.run([]string{"--dir", dir, "produce", "t", "-K", ":"}), out.String())
		}
	})
	b.Run("cmd=producer", func(b *testing.B) {
		b.SetBytes(int64(len(input)))
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			dir := b.TempDir()
			s, err := strata.Open(dir, &strata.Options{RetentionCheckInterval: -1, CleanerInterval: -1})
			require.NoError(b, err)
			require.NoError(b, s.CreateTopic("t", strata.TopicConfig{Partitions: 6}))
			require.NoError(b, s.Close())
			b.StartTimer()
			s, err = strata.Open(dir, &strata.Options{RetentionCheckInterval: -1, CleanerInterval: -1})
			require.NoError(b, err)
			p := s.Producer(strata.ProducerOptions{})
			sc := bufio.NewScanner(bytes.NewReader(input))
			for sc.Scan() {
				k, v, _ := bytes.Cut(sc.Bytes(), []byte(":"))
				require.NoError(b, p.Produce(context.Background(), "t", strata.Record{Key: k, Value: v}, nil))
			}
			require.NoError(b, p.Close())
			require.NoError(b, s.Close())
		}
	})
}
