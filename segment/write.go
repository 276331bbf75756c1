package segment

import (
	"errors"
	"fmt"
	"runtime"
)

// The steps in which a writable segment's .log file is grown ahead of its
// appends when zeros are not written ahead of them (see zerosAhead) and
// they are copied into the mapping: the first step reserves minGrowth
// bytes with fallocate, each later one as much as the file holds, up to
// maxGrowth. A small partition thus reserves little disk, a busy one calls
// fallocate once per 16 MiB. The zeros' steps start at minGrowth too.
const (
	minGrowth = 64 << 10
	maxGrowth = 16 << 20
)

// mappedWriteMax is the largest append copied into the mapping. Below a page
// the copy wins by far (a 126-byte record: ~0.1 µs against ~0.5 µs for
// pwrite, which is mostly the system call); from a page on, pwrite into a
// file growing by delayed allocation is as fast or faster than faulting
// fresh pages of the mapping in (8 KiB: ~3.8 µs against ~5.6 µs, measured
// on ext4).
const mappedWriteMax = 4<<10 - 1

// A segment's first append (at position 0) is written with pwrite, even
// when small: the first write through a fresh shared mapping of a file, and
// a truncate of the file after it, cost far more than a pwrite (~250-900 µs
// on ext4 in a VM, against ~3 µs), so a segment that only ever holds one
// batch (a test's, a quiet partition's) never pays them, nor reserves
// blocks or writes zeros it does not need (unless Config.ZeroFill).

// write puts batches into the .log file at pos, the end of the segment's
// batches, after writing zeros ahead of them if the append is due to (see
// Segment.zerosAhead and Config.ZeroFill): if they are smaller than a page and not
// the segment's first, copied into the mapping, the file holding written
// zeros or reserved blocks that far (reserved first if needed); otherwise,
// or if that cannot be, with one pwrite.
// On failure nothing past pos counts, and s.allocated still never exceeds
// the file's size.
func (s *Segment) write(batches []byte, pos int64) error {
	end := pos + int64(len(batches))
	if (s.cfg.ZeroFill || s.zerosAhead && pos > 0) && end > s.zeroed {
		s.fillZeros(pos, end)
	}
	if len(batches) <= mappedWriteMax && pos > 0 && s.reserve(end) {
		if err := s.log.WriteMap(s.data, int(pos), batches); err != nil {
			return fmt.Errorf("segment: writing %s at %d: %w", s.path, pos, err)
		}
		s.releaseBehind(end)
		return nil
	}
	n, err := s.log.WriteAt(batches, pos)
	if err != nil {
		if n > 0 && end > s.allocated {
			// Best effort: the next append overwrites the bytes anyway.
			s.allocated = min(s.allocated, pos)
			s.zeroed = min(s.zeroed, pos)
			_ = s.log.Truncate(pos)
		}
		return fmt.Errorf("segment: writing %s at %d: %w", s.path, pos, err)
	}
	s.allocated = max(s.allocated, end)
	s.zeroed = max(s.zeroed, end)
	return nil
}

// zerosAhead says whether, on the OS's files, every append after a
// writable segment's first writes zeros ahead of itself into the .log file
// (see fillZeros), as Config.ZeroFill has all appends do. On Linux it
// does: an append into zeros already written costs less than one that
// grows the file, by a write call or through the mapping into blocks
// reserved with fallocate (BenchmarkAppend on ext4, process CPU per
// append, with the zeros written in 1 MiB calls: 1 record -10%, 100
// records -22%; see zeroChunk for what 64 KiB calls cost), since the
// kernel readies the page cache for a whole step of zeros at once rather
// than page by page.
// Elsewhere it was not measured, and only Config.ZeroFill writes zeros.
const zerosAhead = runtime.GOOS == "linux"

// zeroStep is the most that fillZeros writes ahead of an append: past the
// first steps, one step costs a MiB of zeros (and, for a segment synced
// after every append, a journal commit), which 80 appends of 12 KiB or
// 8000 of one small record share.
const zeroStep = 1 << 20

// zeroChunk is the most that one write call of fillZeros covers: a step
// takes several. On the 2-core Firecracker VM the benchmarks run on, the
// zeros of larger calls were at times copied into the page cache
// (copy_folio_from_iter_atomic) three to four times as slowly: with 1 MiB
// calls in 5 of 24 runs of 1 M appends of 100 records; with 256 KiB calls
// in none of those 24, but in three of five W2 runs in three of four full
// bench/compare tables of one afternoon (2.6–3.6 M records/s instead of
// 9–11 M), and in partition's BenchmarkAppend of 100 records (14.5 µs
// ± 81% against 7.6 µs ± 2% with 64 KiB calls, 6 counts). With 64 KiB
// calls the full table that afternoon had no slow run; they cost a
// single-record append 6.5% more (360 against 338 ns), as a MiB of zeros
// takes 16 calls instead of 4. The likely reason is that the page cache
// sizes its folios by the write's length: large folios come from the page
// allocator's largest free blocks, which a virtual machine that hands
// free memory back to its host (virtio-balloon free page reporting, which
// that VM has) may have given back, so that their first write waits for
// the host.
const zeroChunk = 64 << 10

// zeroes is what fillZeros writes: never written to.
var zeroes [zeroChunk]byte

// fillZeros writes zeros into the .log file from the end of what it holds
// written (pos at the least: the bytes before it are batches) past end, so
// that this append and the next ones land in written blocks. The step
// starts at minGrowth and grows with the file, as reserve's does, up to
// zeroStep, and never reaches past MaxBytes: a segment that only ever
// holds a few batches writes few zeros. It is best effort: a failure (a
// full disk) leaves zeros past the batches at most, which count for
// nothing, and the append goes on as it would have without.
func (s *Segment) fillZeros(pos, end int64) {
	from := max(s.zeroed, pos)
	step := min(max(s.zeroed, minGrowth), zeroStep)
	to := min(int64(len(s.data)), max(end, from)+step)
	for off := from; off < to; {
		n, err := s.log.WriteAt(zeroes[:min(to-off, zeroChunk)], off)
		if err != nil {
			return
		}
		off += int64(n)
	}
	s.zeroed = max(s.zeroed, to)
	s.allocated = max(s.allocated, to)
}

// reserve reports whether an append ending at end may be copied into the
// mapping: the file's blocks are reserved up to end, by fallocate now if
// they were not. It says no (and the append uses a write call) when writes
// are configured to, when the file system cannot reserve blocks, or when
// the reservation fails, as it does on a full disk: the write call then
// meets the error, if there is one, as a clean failure rather than a fault
// in the middle of a copy.
func (s *Segment) reserve(end int64) bool {
	switch {
	case end <= s.allocated:
		return !s.cfg.WriteCalls && !s.noReserve
	case s.cfg.WriteCalls || s.noReserve || end > int64(len(s.data)):
		return false
	}
	next := int64(minGrowth) // the first step, whatever the first append wrote
	if s.allocated >= minGrowth {
		next = s.allocated + min(s.allocated, maxGrowth)
	}
	want := min(int64(len(s.data)), max(end, next))
	if err := s.log.Allocate(want); err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			s.noReserve = true
		}
		return false
	}
	s.allocated = want
	return true
}
