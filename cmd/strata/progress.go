package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// progress draws a progress bar on stderr, redrawn in place with a
// carriage return, at most ten times a second; on anything but a terminal
// it draws nothing. Its methods are not safe for concurrent use.
type progress struct {
	w     io.Writer // nil: draw nothing
	label string
	total int64 // 0: unknown, draw a count only
	unit  string
	done  int64
	last  time.Time
	drawn bool
}

// newProgress returns a bar labelled label counting to total units (0 if
// unknown), drawn only when stderr is a terminal.
func (a *app) newProgress(label string, total int64, unit string) *progress {
	p := &progress{label: label, total: total, unit: unit}
	if a.stderrTTY {
		p.w = a.stderr
	}
	return p
}

// add counts n more units done.
func (p *progress) add(n int64) {
	p.done += n
	if p.w == nil {
		return
	}
	if now := time.Now(); now.Sub(p.last) >= 100*time.Millisecond {
		p.last = now
		p.draw()
	}
}

func (p *progress) draw() {
	const width = 30
	if p.total > 0 {
		frac := min(float64(p.done)/float64(p.total), 1)
		n := int(frac * width)
		fmt.Fprintf(p.w, "\r%s [%s%s] %3.0f%% %d/%d %s", p.label,
			strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, p.done, p.total, p.unit)
	} else {
		fmt.Fprintf(p.w, "\r%s %d %s", p.label, p.done, p.unit)
	}
	p.drawn = true
}

// finish draws the final state and ends the line, if anything was drawn.
func (p *progress) finish() {
	if p.w == nil {
		return
	}
	p.draw()
	fmt.Fprintln(p.w)
}
