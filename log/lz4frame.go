package log

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"github.com/pierrec/lz4/v4"
)

// The LZ4 frame format (lz4's doc/lz4_Frame_format.md), as Kafka frames a
// batch's records: the magic, a frame descriptor (FLG, BD, optional content
// size and dictionary id, a header checksum), blocks each prefixed by a
// little-endian uint32 size (high bit: stored uncompressed) and followed by
// an optional block checksum, an end mark (size 0), an optional content
// checksum. Kafka requires independent blocks and writes 64 KiB ones with
// no checksums.
//
// This file decodes frames straight into the destination buffer, block by
// block, and writes them with pooled block compressors: the streaming
// reader and writer of pierrec/lz4 copy every byte once more. Like Kafka's
// reader, it refuses frames of dependent blocks (ErrUnsupportedCompression).
const (
	lz4Magic      = 0x184D2204
	lz4FlagIndep  = 0x20
	lz4FlagBlkSum = 0x10
	lz4FlagSize   = 0x08
	lz4FlagSum    = 0x04
	lz4FlagDict   = 0x01
	lz4Uncomp     = 0x80000000
	lz4BlockMax   = 64 << 10 // the block size written (Kafka's default)
)

// lz4Header is the frame header written: the magic, FLG (version 1,
// independent blocks, no checksums, no content size), BD (64 KiB blocks)
// and the header checksum of those two bytes (the second byte of their
// xxHash32), as lz4's reference writer computes it.
var lz4Header = []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82}

// unlz4 appends to dst the frames of src decompressed, up to limit bytes.
func unlz4(dst, src []byte, limit int) ([]byte, error) {
	start := len(dst)
	for len(src) > 0 {
		var err error
		if dst, src, err = unlz4Frame(dst, src, start, limit); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// unlz4Frame decodes the frame at the start of src into dst and returns
// what follows it.
func unlz4Frame(dst, src []byte, start, limit int) ([]byte, []byte, error) {
	le := binary.LittleEndian
	if len(src) < 7 || le.Uint32(src) != lz4Magic {
		return dst, nil, errorf(ErrCorrupt, "lz4: no frame magic")
	}
	flg, bd := src[4], src[5]
	if flg>>6 != 1 {
		return dst, nil, errorf(ErrCorrupt, "lz4: frame version %d", flg>>6)
	}
	blockMax := 0
	switch bd >> 4 & 7 {
	case 4:
		blockMax = 64 << 10
	case 5:
		blockMax = 256 << 10
	case 6:
		blockMax = 1 << 20
	case 7:
		blockMax = 4 << 20
	default:
		return dst, nil, errorf(ErrCorrupt, "lz4: block size code %d", bd>>4&7)
	}
	p := 6
	if flg&lz4FlagSize != 0 {
		p += 8
	}
	if flg&lz4FlagDict != 0 || flg&lz4FlagIndep == 0 {
		// As Kafka's reader: "Dependent block stream is unsupported".
		return dst, nil, errorf(ErrUnsupportedCompression, "lz4 frame with dependent blocks or a dictionary")
	}
	if p >= len(src) {
		return dst, nil, errorf(ErrCorrupt, "lz4: frame header cut short")
	}
	// The header checksum, which Kafka's reader checks too: the second
	// byte of the xxHash32 of the descriptor.
	if want := byte(xxh32Short(src[4:p]) >> 8); src[p] != want {
		return dst, nil, errorf(ErrCorrupt, "lz4: frame header checksum %#02x, want %#02x", src[p], want)
	}
	p++
	for {
		if len(src)-p < 4 {
			return dst, nil, errorf(ErrCorrupt, "lz4: block size cut short")
		}
		size := le.Uint32(src[p:])
		p += 4
		if size == 0 {
			break // the end mark
		}
		stored := size&lz4Uncomp != 0
		n := int(size &^ lz4Uncomp)
		if n > len(src)-p || n > blockMax {
			return dst, nil, errorf(ErrCorrupt, "lz4: block of %d bytes (at most %d) runs past the end", n, blockMax)
		}
		block := src[p : p+n]
		p += n
		if flg&lz4FlagBlkSum != 0 {
			p += 4
		}
		room := blockMax
		if stored {
			room = n
		}
		if len(dst)-start+room > limit {
			room = limit - (len(dst) - start) // decoding past it fails below
			if room < 0 || (stored && n > room) {
				return dst, nil, errTooLarge(LZ4, limit)
			}
		}
		at := len(dst)
		dst = slices.Grow(dst, room)[:at+room]
		if stored {
			copy(dst[at:], block)
			dst = dst[:at+n]
			continue
		}
		m, err := lz4.UncompressBlock(block, dst[at:])
		if err != nil {
			if room < blockMax && len(dst)-start >= limit {
				return dst[:at], nil, errTooLarge(LZ4, limit)
			}
			return dst[:at], nil, errorf(ErrCorrupt, "lz4: block: %v", err)
		}
		dst = dst[:at+m]
	}
	if flg&lz4FlagSum != 0 {
		p += 4
	}
	if p > len(src) {
		return dst, nil, errorf(ErrCorrupt, "lz4: content checksum cut short")
	}
	return dst, src[p:], nil
}

// lz4Compressors pools the block compressors of the fast level;
// lz4HCCompressors those of the others, per pierrec level (1 to 9).
var (
	lz4Compressors   = sync.Pool{New: func() any { return new(lz4.Compressor) }}
	lz4HCCompressors [9]sync.Pool
)

// lz4Append appends src as an LZ4 frame of independent 64 KiB blocks with
// no checksums, as Kafka's producer frames it, compressed at level.
func lz4Append(dst, src []byte, level int) ([]byte, error) {
	var compress func(src, dst []byte) (int, error)
	if l := lz4Level(level); l == lz4.Fast {
		c := lz4Compressors.Get().(*lz4.Compressor)
		defer lz4Compressors.Put(c)
		compress = c.CompressBlock
	} else {
		pool := &lz4HCCompressors[min(level, 9)-1]
		c, _ := pool.Get().(*lz4.CompressorHC)
		if c == nil {
			c = &lz4.CompressorHC{Level: l}
		}
		defer pool.Put(c)
		compress = c.CompressBlock
	}
	dst = append(dst, lz4Header...)
	le := binary.LittleEndian
	for p := 0; p < len(src); p += lz4BlockMax {
		block := src[p:min(len(src), p+lz4BlockMax)]
		at := len(dst)
		bound := lz4.CompressBlockBound(len(block))
		dst = slices.Grow(dst, 4+bound)[:at+4+bound]
		n, err := compress(block, dst[at+4:])
		if err != nil {
			return dst[:at], fmt.Errorf("lz4: %w", err)
		}
		if n == 0 || n >= len(block) {
			// Incompressible: stored as it is.
			dst = append(dst[:at+4], block...)
			le.PutUint32(dst[at:], uint32(len(block))|lz4Uncomp)
			continue
		}
		le.PutUint32(dst[at:], uint32(n))
		dst = dst[:at+4+n]
	}
	return le.AppendUint32(dst, 0), nil // the end mark
}

// lz4Level maps a Kafka lz4 level to pierrec's: Kafka's default (9) uses
// lz4-java's fast compressor, the others its high-compression one, whose
// levels pierrec has up to 9.
func lz4Level(level int) lz4.CompressionLevel {
	if level == 0 || level == DefaultLZ4Level {
		return lz4.Fast
	}
	return lz4.Level1 << (min(level, 9) - 1)
}

// xxh32Short returns the xxHash32 (seed 0) of b, shorter than 16 bytes, as
// an LZ4 frame descriptor is (at most 11 bytes).
func xxh32Short(b []byte) uint32 {
	const (
		p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
	)
	rotl := func(x uint32, r uint) uint32 { return x<<r | x>>(32-r) }
	h := uint32(p5) + uint32(len(b))
	for ; len(b) >= 4; b = b[4:] {
		h = rotl(h+binary.LittleEndian.Uint32(b)*p3, 17) * p4
	}
	for _, c := range b {
		h = rotl(h+uint32(c)*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
