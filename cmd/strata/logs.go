package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
)

// warnHandler writes the store's warnings and errors as the command's
// other messages are written: one line, "strata: warning: " (or
// "strata: error: ") and the message, its attributes after it as
// key=value, quoted where they hold a space.
type warnHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	attrs []slog.Attr
}

func newWarnHandler(w io.Writer) *warnHandler { return &warnHandler{mu: new(sync.Mutex), w: w} }

func (h *warnHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *warnHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("strata: warning: ")
	if r.Level >= slog.LevelError {
		b.Reset()
		b.WriteString("strata: error: ")
	}
	b.WriteString(strings.TrimPrefix(r.Message, "strata: "))
	write := func(a slog.Attr) bool {
		v := a.Value.Resolve().String()
		if v == "" || strings.ContainsAny(v, " \t\n\"") {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&b, " %s=%s", a.Key, v)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *warnHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &warnHandler{mu: h.mu, w: h.w, attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], attrs...)}
}

// WithGroup is not used by the store; the group's attributes are written
// as the others are.
func (h *warnHandler) WithGroup(string) slog.Handler { return h }
