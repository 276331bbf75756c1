// Compress writes the records section given on stdin compressed as Kafka's
// Java producer compresses a batch's records (its GzipCompression,
// SnappyCompression and ZstdCompression wrap the output stream so), to
// stdout. Usage: java -cp snappy-java.jar:zstd-jni.jar Compress.java gzip|snappy|zstd
//
// compat's TestJavaBatchesDecodeInStrata runs it with -update to make the
// golden batches testdata/java-*.batch.

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;

public class Compress {
    public static void main(String[] args) throws Exception {
        byte[] in = System.in.readAllBytes();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        OutputStream w;
        switch (args[0]) {
            case "gzip":
                // Kafka: a GZIPOutputStream of an 8 KiB buffer at the level
                // (default Deflater.DEFAULT_COMPRESSION), behind 16 KiB of buffering.
                w = new BufferedOutputStream(new GZIPOutputStream(out, 8 * 1024) {
                    { def.setLevel(Deflater.DEFAULT_COMPRESSION); }
                }, 16 * 1024);
                break;
            case "snappy":
                // Kafka: snappy-java's SnappyOutputStream, default block size.
                w = new org.xerial.snappy.SnappyOutputStream(out);
                break;
            case "zstd":
                // Kafka: zstd-jni's stream at level 3, behind 16 KiB of buffering.
                w = new BufferedOutputStream(new com.github.luben.zstd.ZstdOutputStreamNoFinalizer(out, 3), 16 * 1024);
                break;
            default:
                throw new IllegalArgumentException("codec " + args[0]);
        }
        w.write(in);
        w.close();
        System.out.write(out.toByteArray());
        System.out.flush();
    }
}
