package compat

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/log"
)

// javaClasspath is where Debian's libsnappy-java and libzstd-jni-java put
// the libraries Kafka's Java producer compresses with.
const javaClasspath = "/usr/share/java/snappy-java.jar:/usr/share/java/zstd-jni.jar"

// javaBatch returns the batch plain with its records section compressed
// by testdata/java/Compress.java as Kafka's Java producer compresses it.
func javaBatch(t *testing.T, plain []byte, codec string, typ byte) []byte {
	t.Helper()
	cmd := exec.Command("java", "-cp", javaClasspath, filepath.Join("testdata", "java", "Compress.java"), codec)
	cmd.Stdin = bytes.NewReader(plain[log.BatchHeaderSize:])
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "java: %s", stderr.String())
	return kafkadir.WithSection(plain, out, log.Compression(typ))
}

// TestJavaBatchesDecodeInStrata: batches compressed as Kafka's Java
// producer compresses them — java.util.zip's gzip, snappy-java's xerial
// framing in 32 KiB chunks, zstd-jni's stream — read back in Strata record
// for record (testdata/java-*.batch; -update makes them again with
// testdata/java/Compress.java, which needs a JDK, libsnappy-java and
// libzstd-jni-java).
func TestJavaBatchesDecodeInStrata(t *testing.T) {
	recs := events(1000) // a records section of several xerial chunks
	plain, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1})
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		codec log.Compression
	}{
		{"gzip", log.Gzip},
		{"snappy", log.Snappy},
		{"zstd", log.Zstd},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join("testdata", "java-"+c.name+".batch")
			if *update {
				require.NoError(t, os.WriteFile(path, javaBatch(t, plain, c.name, byte(c.codec)), 0o644))
			}
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			h, err := log.CheckBatch(b)
			require.NoError(t, err)
			require.Equal(t, c.codec, h.Compression())
			if c.codec == log.Snappy {
				section := b[log.BatchHeaderSize:]
				require.True(t, bytes.HasPrefix(section, []byte("\x82SNAPPY\x00")), "the xerial framing")
				require.Greater(t, len(plain)-log.BatchHeaderSize, 2*32<<10, "more than two chunks")
			}
			var d log.Decoder
			got, err := d.Plain(b, h)
			require.NoError(t, err)
			require.Equal(t, plain[log.BatchHeaderSize:], got[log.BatchHeaderSize:], "the very records section")
			it, err := d.Iter(b, h)
			require.NoError(t, err)
			var r log.Record
			n := 0
			for it.Next(&r) {
				require.Equal(t, string(recs[n].Key), string(r.Key))
				require.Equal(t, string(recs[n].Value), string(r.Value))
				n++
			}
			require.NoError(t, it.Err())
			require.Equal(t, len(recs), n)
		})
	}
}
