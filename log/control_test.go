package log

import (
	"errors"
	"testing"
)

func TestParseControlKey(t *testing.T) {
	for _, c := range []struct {
		key  []byte
		want ControlType
		err  bool
	}{
		{key: []byte{0, 0, 0, 0}, want: ControlAbort},
		{key: []byte{0, 0, 0, 1}, want: ControlCommit},
		{key: []byte{0, 1, 0, 1}, want: ControlCommit}, // a later version reads as 0
		{key: []byte{0, 0, 0, 9}, want: ControlType(9)},
		{key: []byte{0, 0, 0, 1, 7}, want: ControlCommit},
		{key: []byte{0, 0, 0}, err: true},
		{key: nil, err: true},
		{key: []byte{0xff, 0xff, 0, 1}, err: true},
	} {
		got, err := ParseControlKey(c.key)
		if c.err {
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("ParseControlKey(%x) = %v, %v; want ErrCorrupt", c.key, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseControlKey(%x) = %v, %v; want %v", c.key, got, err, c.want)
		}
	}
	if ControlCommit.String() != "COMMIT" || ControlAbort.String() != "ABORT" || ControlType(9).String() != "ControlType(9)" {
		t.Errorf("String: %v %v %v", ControlCommit, ControlAbort, ControlType(9))
	}
}
