//go:build !unix && !windows

package vfs

import "errors"

func mapRegion(int) ([]byte, int, error) { return nil, 0, errors.ErrUnsupported }

func commitRegion([]byte) error { return errors.ErrUnsupported }

func setReserveOnly(bool) {}

func unmapRegion([]byte) {}

func zeroRegion(b []byte) { clear(b) }
