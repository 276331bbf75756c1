//go:build !unix

package vfs

import "errors"

func mapRegion(int) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapRegion([]byte) {}

func zeroRegion(b []byte) { clear(b) }
