// Package bubble is a test helper for testing/synctest: it counts the
// goroutines of the calling goroutine's bubble, which, unlike
// runtime.NumGoroutine, leaves out every goroutine outside it (another
// test's, the runtime's), so that a test of what a call starts can count
// exactly.
package bubble

import (
	"bytes"
	"runtime"
)

// Goroutines returns the number of goroutines in the calling goroutine's
// synctest bubble, the caller included, or -1 if it is in none. It reads
// the bubble's id in the goroutine headers of runtime.Stack
// ("goroutine 7 [chan receive (durable), synctest bubble 3]:").
func Goroutines() int {
	id := own()
	if id == nil {
		return -1
	}
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for line := range bytes.Lines(buf) {
		if bytes.HasPrefix(line, []byte("goroutine ")) && bytes.Equal(bubbleOf(line), id) {
			count++
		}
	}
	return count
}

// own returns the bubble id in the calling goroutine's header, or nil.
func own() []byte {
	buf := make([]byte, 512)
	n := runtime.Stack(buf, false)
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	return bubbleOf(line)
}

// bubbleOf returns the id after ", synctest bubble " in a goroutine's
// header line, or nil.
func bubbleOf(header []byte) []byte {
	const key = ", synctest bubble "
	i := bytes.Index(header, []byte(key))
	if i < 0 {
		return nil
	}
	rest := header[i+len(key):]
	end := bytes.IndexAny(rest, ",]")
	if end < 0 {
		return nil
	}
	return rest[:end]
}
