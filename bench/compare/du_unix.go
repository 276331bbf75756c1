//go:build unix

package main

import (
	"io/fs"
	"syscall"
)

// blocks is the bytes the file system allocated for a file: st_blocks,
// which counts 512-byte units (stat(2)).
func blocks(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return -1
}
