package mirror

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// An offsetSync says that the source record at offset Upstream was copied to
// the target at offset Downstream, as MirrorMaker 2's OffsetSync records do
// (connect/mirror OffsetSync.java): key topic and partition, value the
// upstream and downstream offsets.
//
// The mirror writes a sync for the first record of each run of records whose
// target offset minus source offset is the same, and one after the last
// record it copied in a transaction (Upstream the next source offset to read,
// Downstream the target's offset after the copied records). The last sync of
// a partition is therefore the mirror's progress, and between two syncs every
// source record maps to Downstream + (offset - Upstream) of the earlier one.
type offsetSync struct {
	Upstream   int64
	Downstream int64
}

// syncValueLen is the size of a sync record's value: two big-endian int64s.
const syncValueLen = 16

// errBadSync means a record of the offset-syncs topic is not one the mirror
// wrote.
var errBadSync = errors.New("mirror: malformed offset sync record")

// syncKey is the key of a sync record: the target topic and partition, as
// "topic/partition" (a topic name holds no slash).
func syncKey(topic string, partition int32) []byte {
	return []byte(topic + "/" + strconv.Itoa(int(partition)))
}

func parseSyncKey(key []byte) (topic string, partition int32, err error) {
	s := string(key)
	i := strings.LastIndexByte(s, '/')
	if i <= 0 {
		return "", 0, fmt.Errorf("%w: key %q", errBadSync, key)
	}
	p, err := strconv.ParseInt(s[i+1:], 10, 32)
	if err != nil || p < 0 {
		return "", 0, fmt.Errorf("%w: key %q", errBadSync, key)
	}
	return s[:i], int32(p), nil
}

func (s offsetSync) appendValue(b []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(s.Upstream))
	return binary.BigEndian.AppendUint64(b, uint64(s.Downstream))
}

func parseSyncValue(v []byte) (offsetSync, error) {
	if len(v) != syncValueLen {
		return offsetSync{}, fmt.Errorf("%w: value of %d bytes, want %d", errBadSync, len(v), syncValueLen)
	}
	s := offsetSync{
		Upstream:   int64(binary.BigEndian.Uint64(v)),
		Downstream: int64(binary.BigEndian.Uint64(v[8:])),
	}
	if s.Upstream < 0 || s.Downstream < 0 {
		return offsetSync{}, fmt.Errorf("%w: negative offset", errBadSync)
	}
	return s, nil
}

// syncList is one partition's syncs in increasing order of both offsets.
type syncList []offsetSync

// add appends s, dropping an earlier sync that s makes redundant: the last
// one when it has the same difference between the offsets (a run's start
// stays; a progress sync in the middle of a run says nothing new). A sync
// that goes backwards replaces what it contradicts: it can only come from
// a target topic that was emptied and refilled, whose old mapping is gone.
func (l syncList) add(s offsetSync) syncList {
	for len(l) > 0 {
		last := l[len(l)-1]
		if last.Upstream < s.Upstream && last.Downstream < s.Downstream {
			break
		}
		l = l[:len(l)-1]
	}
	if n := len(l); n >= 2 {
		prev, last := l[n-2], l[n-1]
		if last.Downstream-last.Upstream == s.Downstream-s.Upstream &&
			prev.Downstream-prev.Upstream == s.Downstream-s.Upstream {
			l[n-1] = s
			return l
		}
	}
	return append(l, s)
}

// translate returns the target offset at which a consumer that committed
// source offset x (the next source offset it would read) resumes on the
// target: the offset of the first copied record whose source offset is x
// or more, or the target offset after the last copied record when there is
// none. It never lands past a record the group had not consumed, nor before
// one it had. It returns false when x lies beyond the mirror's progress
// (the last sync), which cannot be translated yet, or when the list is
// empty.
func (l syncList) translate(x int64) (int64, bool) {
	if len(l) == 0 || x > l[len(l)-1].Upstream {
		return 0, false
	}
	i := sort.Search(len(l), func(i int) bool { return l[i].Upstream > x }) - 1
	if i < 0 {
		// Before the first copied record: no record below it was copied.
		return l[0].Downstream, true
	}
	t := l[i].Downstream + (x - l[i].Upstream)
	if i+1 < len(l) {
		t = min(t, l[i+1].Downstream)
	}
	return t, true
}

// last returns the last sync: the mirror's progress.
func (l syncList) last() (offsetSync, bool) {
	if len(l) == 0 {
		return offsetSync{}, false
	}
	return l[len(l)-1], true
}

// runSyncs returns the syncs of one transaction's copied records of a
// partition, given their source and target offsets in order, and next, the
// next source offset to read after them: a sync at each record whose offset
// difference differs from the one before it (the first record compared with
// prev, the partition's last sync, if any), and the progress sync after the
// last record.
func runSyncs(prev offsetSync, havePrev bool, src, tgt []int64) []offsetSync {
	var out []offsetSync
	delta, have := prev.Downstream-prev.Upstream, havePrev
	for i := range src {
		d := tgt[i] - src[i]
		if !have || d != delta {
			out = append(out, offsetSync{Upstream: src[i], Downstream: tgt[i]})
		}
		delta, have = d, true
	}
	if n := len(src); n > 0 {
		out = append(out, offsetSync{Upstream: src[n-1] + 1, Downstream: tgt[n-1] + 1})
	}
	return out
}
