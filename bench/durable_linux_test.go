package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// rawAhead is how far ahead of the writes the raw baselines reserve their
// file (fallocate) or fill it with zeros: a step taken in the timed loop,
// as a log would take it.
const rawAhead = 1 << 20

// benchmarkRawDurable is the ceiling of a durable append: batch written
// at the end of one file per call and made durable before the next, by
// each of the ways Linux offers:
//
//   - sync=fsync: pwrite(2), then fsync(2);
//   - sync=fdatasync: pwrite(2), then fdatasync(2), which skips the inode's
//     timestamps but still writes its size when the size changed;
//   - sync=rwf-dsync: pwritev2(2) with RWF_DSYNC, writing and syncing in
//     one system call;
//   - sync=o-dsync: pwrite(2) to a file opened with O_DSYNC.
//
// and on a file prepared three ways:
//
//   - file=grow: a new file that each write extends;
//   - file=fallocate: a file reserved rawAhead bytes ahead of the writes
//     (fallocate(2), mode 0: unwritten extents that each write converts);
//   - file=zeroed: a file filled with zeros rawAhead bytes ahead of the
//     writes and made durable (fdatasync), so that a write changes
//     neither the size nor the extents and its sync has only data to
//     write.
func benchmarkRawDurable(b *testing.B, batch []byte, perOp int) {
	for _, file := range []string{"grow", "fallocate", "zeroed"} {
		for _, sync := range []string{"fsync", "fdatasync", "rwf-dsync", "o-dsync"} {
			b.Run(fmt.Sprintf("impl=raw/file=%s/sync=%s", file, sync), func(b *testing.B) {
				rawDurable(b, batch, perOp, file, sync)
			})
		}
	}
}

func rawDurable(b *testing.B, batch []byte, perOp int, file, sync string) {
	flags := os.O_RDWR | os.O_CREATE | os.O_EXCL
	if sync == "o-dsync" {
		flags |= unix.O_DSYNC
	}
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "raw"), flags, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	zeros := make([]byte, rawAhead)
	var pos, ready int64
	iov := [][]byte{batch}
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		end := pos + int64(len(batch))
		if file != "grow" && end > ready {
			if err := rawPrepare(fd, file, ready, zeros); err != nil {
				b.Fatal(err)
			}
			ready += rawAhead
		}
		switch sync {
		case "rwf-dsync":
			_, err = unix.Pwritev2(fd, iov, pos, unix.RWF_DSYNC)
		default:
			_, err = unix.Pwrite(fd, batch, pos)
		}
		if err == nil {
			switch sync {
			case "fsync":
				err = unix.Fsync(fd)
			case "fdatasync":
				err = unix.Fdatasync(fd)
			}
		}
		if err != nil {
			b.Fatal(err)
		}
		pos = end
	}
	b.ReportMetric(float64(b.N*perOp)/b.Elapsed().Seconds(), "records/s")
}

// rawPrepare readies the rawAhead bytes of the file at off: reserved, or
// written with zeros and made durable.
func rawPrepare(fd int, file string, off int64, zeros []byte) error {
	if file == "fallocate" {
		return unix.Fallocate(fd, 0, off, rawAhead)
	}
	if _, err := unix.Pwrite(fd, zeros, off); err != nil {
		return err
	}
	return unix.Fdatasync(fd)
}

// rawPairedLogs are the raw baselines of BenchmarkDurablePaired on
// Linux, the ways of benchmarkRawDurable taking turns with the logs: the
// batch written with pwrite into a file filled with zeros rawAhead bytes
// ahead (as Strata writes a segment under SyncAlways), then fdatasync;
// the same written and synced in one step (pwritev2 with RWF_DSYNC) or to
// an O_DSYNC file; and pwrite + fdatasync of a file that grows, and of
// one reserved ahead with fallocate.
func rawPairedLogs(b *testing.B, dir string, batch []byte) []durableLog {
	var logs []durableLog
	for _, v := range []struct{ file, sync string }{
		{"zeroed", "fdatasync"}, {"zeroed", "rwf-dsync"}, {"zeroed", "o-dsync"},
		{"grow", "fdatasync"}, {"fallocate", "fdatasync"},
	} {
		flags := os.O_RDWR | os.O_CREATE | os.O_EXCL
		if v.sync == "o-dsync" {
			flags |= unix.O_DSYNC
		}
		name := "raw-" + v.file + "-" + v.sync
		f, err := os.OpenFile(filepath.Join(dir, name), flags, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		fd := int(f.Fd())
		zeros := make([]byte, rawAhead)
		iov := [][]byte{batch}
		var pos, ready int64
		logs = append(logs, durableLog{name, func() error {
			end := pos + int64(len(batch))
			if v.file != "grow" && end > ready {
				if err := rawPrepare(fd, v.file, ready, zeros); err != nil {
					return err
				}
				ready += rawAhead
			}
			var err error
			if v.sync == "rwf-dsync" {
				_, err = unix.Pwritev2(fd, iov, pos, unix.RWF_DSYNC)
			} else {
				_, err = unix.Pwrite(fd, batch, pos)
			}
			if err == nil && v.sync == "fdatasync" {
				err = unix.Fdatasync(fd)
			}
			pos = end
			return err
		}, f.Close})
	}
	return logs
}
