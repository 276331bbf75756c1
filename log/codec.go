package log

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// The codecs of a compressed batch's records section, as Kafka frames them
// (clients/src/main/java/org/apache/kafka/common/compress/): gzip, an RFC
// 1952 stream; snappy, a raw snappy block (as librdkafka and franz-go write
// it) or, on reading, the xerial framing Kafka's Java producer writes; lz4,
// an LZ4 frame with independent blocks; zstd, standard frames. Encoders and decoders are pooled and reused.

// Compression levels, as Kafka's KIP-390 numbers them. Zero is each
// codec's default.
const (
	MinGzipLevel, MaxGzipLevel, DefaultGzipLevel = 1, 9, 6
	MinLZ4Level, MaxLZ4Level, DefaultLZ4Level    = 1, 17, 9
	MinZstdLevel, MaxZstdLevel, DefaultZstdLevel = -131072, 22, 3
)

// CheckLevel reports a codec this package cannot compress with
// (ErrUnsupportedCompression: Kafka has codecs 0 to 4), and, with
// ErrInvalidBatch, a compression level that codec c does not take: gzip 1
// to 9, lz4 1 to 17, zstd -131072 to 22; none and snappy take none. Zero,
// the codec's default, is always valid.
func CheckLevel(c Compression, level int) error {
	return checkLevel(c, level, ErrUnsupportedCompression, ErrInvalidBatch)
}

// CheckConfigLevel is CheckLevel for a configuration: its error, for an
// unknown codec as for a level out of range, wraps invalid (the caller's
// invalid-config sentinel) and ends with that sentinel's text, without
// its package prefix, as in "log: gzip compression level 99 out of range
// [1, 9]: invalid config".
func CheckConfigLevel(c Compression, level int, invalid error) error {
	return checkLevel(c, level, invalid, invalid)
}

func checkLevel(c Compression, level int, unknown, invalid error) error {
	var lo, hi int
	switch c {
	case None, Snappy:
		if level != 0 {
			return errorf(invalid, "%s takes no compression level, got %d", c, level)
		}
		return nil
	case Gzip:
		lo, hi = MinGzipLevel, MaxGzipLevel
	case LZ4:
		lo, hi = MinLZ4Level, MaxLZ4Level
	case Zstd:
		lo, hi = MinZstdLevel, MaxZstdLevel
	default:
		return errorf(unknown, "unknown compression codec %d", c)
	}
	if level != 0 && (level < lo || level > hi) {
		return errorf(invalid, "%s compression level %d out of range [%d, %d]", c, level, lo, hi)
	}
	return nil
}

// errTooLarge is the reason of an ErrTooLarge decompression.
func errTooLarge(c Compression, limit int) error {
	return errorf(ErrTooLarge, "records compressed with %s decompress to more than %d bytes", c, limit)
}

// decompress appends to dst the records section src decompressed with c,
// failing with ErrCorrupt for bytes that are no valid stream of c, with
// ErrTooLarge past limit bytes, and with ErrUnsupportedCompression for a
// codec this package does not know.
func decompress(dst []byte, c Compression, src []byte, limit int) ([]byte, error) {
	var err error
	n := len(dst)
	switch c {
	case Gzip:
		dst, err = gunzip(dst, src, limit)
	case Snappy:
		dst, err = unsnappy(dst, src, limit)
	case LZ4:
		dst, err = unlz4(dst, src, limit)
	case Zstd:
		dst, err = unzstd(dst, src, limit)
	default:
		return dst, errorf(ErrUnsupportedCompression, "unknown compression codec %d", c)
	}
	switch {
	case errors.Is(err, ErrTooLarge) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsupportedCompression):
		return dst[:n], err
	case err != nil:
		return dst[:n], errorf(ErrCorrupt, "records compressed with %s: %v", c, err)
	}
	return dst, nil
}

// readLimited appends what r yields to dst, up to limit bytes. The buffer
// grows by doubling, and never past one byte over the limit (the byte that
// tells the limit was passed), so a stream that would decompress to more
// costs at most about twice the limit.
func readLimited(dst []byte, r io.Reader, c Compression, limit int) ([]byte, error) {
	start := len(dst)
	bound := start + limit + 1
	for {
		if len(dst) == cap(dst) {
			dst = slices.Grow(dst, min(max(len(dst)-start, 4<<10), bound-len(dst)))
		}
		n, err := r.Read(dst[len(dst):min(cap(dst), bound)])
		dst = dst[:len(dst)+n]
		if len(dst)-start > limit {
			return dst, errTooLarge(c, limit)
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// appender is an io.Writer that appends to b.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// gzipReader is a pooled gzip reader with the bytes.Reader it reads.
type gzipReader struct {
	src bytes.Reader
	gz  gzip.Reader
}

var gzipReaders = sync.Pool{New: func() any { return new(gzipReader) }}

func gunzip(dst, src []byte, limit int) ([]byte, error) {
	r := gzipReaders.Get().(*gzipReader)
	defer gzipReaders.Put(r)
	r.src.Reset(src)
	if err := r.gz.Reset(&r.src); err != nil {
		return dst, err
	}
	return readLimited(dst, &r.gz, Gzip, limit)
}

// gzipWriter is a pooled gzip writer with the appender it writes to.
type gzipWriter struct {
	a appender
	w *gzip.Writer
}

// gzipWriters pools gzip writers per level, 1 to 9.
var gzipWriters [MaxGzipLevel + 1]sync.Pool

func gzipAppend(dst, src []byte, level int) ([]byte, error) {
	if level == 0 {
		level = DefaultGzipLevel
	}
	g, _ := gzipWriters[level].Get().(*gzipWriter)
	if g == nil {
		g = new(gzipWriter)
		var err error
		if g.w, err = gzip.NewWriterLevel(&g.a, level); err != nil {
			return dst, err
		}
	} else {
		g.w.Reset(&g.a)
	}
	g.a.b = dst
	defer func() {
		g.a.b = nil // the caller's buffer is not the pool's to keep
		gzipWriters[level].Put(g)
	}()
	if _, err := g.w.Write(src); err != nil {
		return dst, err
	}
	if err := g.w.Close(); err != nil {
		return dst, err
	}
	return g.a.b, nil
}

// xerialMagic starts the xerial snappy framing of Kafka's Java producer
// (snappy-java's SnappyOutputStream): the magic, then an int32 version and
// an int32 minimum compatible version, then chunks of an int32 length and a
// raw snappy block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// xerialHeader is the size of the framing's header.
const xerialHeader = 16

func unsnappy(dst, src []byte, limit int) ([]byte, error) {
	if len(src) > xerialHeader && bytes.HasPrefix(src, xerialMagic) {
		start := len(dst)
		for p := xerialHeader; p < len(src); {
			if len(src)-p < 4 {
				return dst, errorf(ErrCorrupt, "xerial snappy chunk length cut at byte %d", p)
			}
			n := int(binary.BigEndian.Uint32(src[p:]))
			p += 4
			if n < 0 || n > len(src)-p {
				return dst, errorf(ErrCorrupt, "xerial snappy chunk of %d bytes at byte %d runs past the end", n, p)
			}
			var err error
			if dst, err = unsnappyBlock(dst, src[p:p+n], limit-(len(dst)-start)); err != nil {
				return dst, err
			}
			p += n
		}
		return dst, nil
	}
	return unsnappyBlock(dst, src, limit)
}

// unsnappyBlock appends a raw snappy block, decoded, to dst.
func unsnappyBlock(dst, src []byte, limit int) ([]byte, error) {
	n, err := s2.DecodedLen(src)
	if err != nil {
		return dst, err
	}
	if n > limit {
		return dst, errTooLarge(Snappy, limit)
	}
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	out, err := s2.Decode(dst[start:], src)
	if err != nil {
		return dst[:start], err
	}
	if len(out) != n || (n > 0 && &out[0] != &dst[start]) {
		return dst[:start], fmt.Errorf("snappy block decoded to %d bytes, declared %d", len(out), n)
	}
	return dst, nil
}

// zstdDecoders pools zstd decoders per decompression limit (a partition's,
// so there are few): DecodeAll decodes into dst, which serves as the
// window, and fails once the output passes the decoder's maximum, which
// also caps the window a frame may declare; a stream decoder would
// allocate whatever window a hostile frame declares first.
var zstdDecoders sync.Map // limit (int) → *sync.Pool of *zstd.Decoder

func unzstd(dst, src []byte, limit int) ([]byte, error) {
	pool, ok := zstdDecoders.Load(limit)
	if !ok {
		pool, _ = zstdDecoders.LoadOrStore(limit, &sync.Pool{New: func() any {
			zd, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxMemory(uint64(limit)))
			return zd
		}})
	}
	zd := pool.(*sync.Pool).Get().(*zstd.Decoder)
	defer pool.(*sync.Pool).Put(zd)
	out, err := zd.DecodeAll(src, dst)
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
		return dst, errTooLarge(Zstd, limit)
	}
	if err != nil {
		return dst, err
	}
	return out, nil
}

// zstdEncoders holds one encoder per zstd encoder speed in use (Kafka's
// levels map onto the library's four); EncodeAll may be called on it
// concurrently.
var zstdEncoders sync.Map // zstd.EncoderLevel → *zstd.Encoder

func zstdAppend(dst, src []byte, level int) ([]byte, error) {
	if level == 0 {
		level = DefaultZstdLevel
	}
	speed := zstd.EncoderLevelFromZstd(level)
	e, ok := zstdEncoders.Load(speed)
	if !ok {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(speed),
			zstd.WithZeroFrames(true), zstd.WithWindowSize(1<<20))
		if err != nil {
			return dst, err
		}
		e, _ = zstdEncoders.LoadOrStore(speed, enc)
	}
	return e.(*zstd.Encoder).EncodeAll(src, dst), nil
}

// compress appends src compressed with c at level (0 for the codec's
// default) to dst.
func compress(dst []byte, c Compression, level int, src []byte) ([]byte, error) {
	switch c {
	case Gzip:
		return gzipAppend(dst, src, level)
	case Snappy:
		n, m := len(dst), s2.MaxEncodedLen(len(src))
		if m < 0 {
			return dst, errorf(ErrInvalidBatch, "%d bytes are too many for snappy", len(src))
		}
		dst = slices.Grow(dst, m)
		out := s2.EncodeSnappy(dst[n:n+m], src)
		return dst[:n+len(out)], nil
	case LZ4:
		return lz4Append(dst, src, level)
	case Zstd:
		return zstdAppend(dst, src, level)
	}
	return dst, errorf(ErrUnsupportedCompression, "cannot compress with codec %d", c)
}
