package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal: /dev/ptmx, unlocked, and the terminal
// device it stands for (Linux's ioctls, from golang.org/x/sys/unix, which
// the module has already; creack/pty would add a dependency for them).
func openPty(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fd := int(ptmx.Fd())
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	return ptmx, tty
}

// buildStrata builds the strata command into a temporary directory.
func buildStrata(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "strata")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// onTerminal runs bin with args, the streams named in onTTY ("stdout",
// "stderr") on a pseudo-terminal and the others in buffers, and returns
// what the terminal showed and what the buffers got.
func onTerminal(t *testing.T, bin string, onTTY []string, args ...string) (tty, stdout, stderr string) {
	t.Helper()
	ptmx, term := openPty(t)
	defer ptmx.Close()
	cmd := exec.Command(bin, args...)
	var outBuf, errBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outBuf, &errBuf
	for _, s := range onTTY {
		switch s {
		case "stdout":
			cmd.Stdout = term
		case "stderr":
			cmd.Stderr = term
		}
	}
	var shown bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := io.Copy(&shown, ptmx)
		// The terminal's side is closed once the child has exited: EIO.
		if err != nil && !errors.Is(err, syscall.EIO) {
			t.Errorf("reading the terminal: %v", err)
		}
	}()
	err := cmd.Run()
	term.Close()
	<-done
	require.NoError(t, err, "stderr: %s%s", errBuf.String(), shown.String())
	return shown.String(), outBuf.String(), errBuf.String()
}

// TestTerminal runs the built strata under a pseudo-terminal: a produce of
// a large file draws a progress bar on a terminal's stderr and none on a
// file, and tables come out aligned.
func TestTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds strata")
	}
	bin := buildStrata(t)
	dir := t.TempDir()
	t.Setenv("STRATA_DIR", dir)
	out, err := exec.Command(bin, "topics", "create", "events", "--partitions", "3").CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "topics", "create", "a-topic-with-a-long-name").CombinedOutput()
	require.NoError(t, err, "%s", out)

	input := filepath.Join(t.TempDir(), "input.txt")
	var lines bytes.Buffer
	for i := range 400000 {
		fmt.Fprintf(&lines, "key%d:%0100d\n", i%100, i)
	}
	require.NoError(t, os.WriteFile(input, lines.Bytes(), 0o644))

	t.Run("progress bar on a terminal", func(t *testing.T) {
		shown, _, _ := onTerminal(t, bin, []string{"stderr"}, "produce", "events", "--file", input, "-K", ":")
		require.Regexp(t, `\rproduce \[=+\] 100% \d+/\d+ bytes`, shown)
		require.Contains(t, shown, "produced 400000 records to events")
		// Redrawn in place: the first draw as produce starts, the last at
		// 100%, the percentages rising.
		bars := regexp.MustCompile(`\rproduce \[[= ]+\] +(\d+)%`).FindAllStringSubmatch(shown, -1)
		require.GreaterOrEqual(t, len(bars), 2, "%q", shown)
		prev := -1
		for _, bar := range bars {
			pct, err := strconv.Atoi(bar[1])
			require.NoError(t, err)
			require.GreaterOrEqual(t, pct, prev)
			prev = pct
		}
		require.Equal(t, 100, prev)
		require.Less(t, mustAtoi(t, bars[0][1]), 100, "a bar drawn before the end")
	})
	t.Run("consume to a file draws a progress bar", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out.txt")
		shown, _, _ := onTerminal(t, bin, []string{"stderr"}, "consume", "events", "--output-file", out)
		require.Regexp(t, `\rconsume \[=+\] 100% 400000/400000 records`, shown)
		require.Contains(t, shown, "consumed 400000 records of events to ")
		st, err := os.Stat(out)
		require.NoError(t, err)
		require.EqualValues(t, 400000*101, st.Size(), "the values, 100 bytes and a newline each")
	})
	t.Run("no progress bar on a file", func(t *testing.T) {
		shown, _, stderr := onTerminal(t, bin, []string{"stdout"}, "produce", "events", "--file", input, "-K", ":")
		require.Empty(t, shown)
		require.NotContains(t, stderr, "\r")
		require.NotContains(t, stderr, "%")
		require.Regexp(t, `^produced 400000 records to events, partition 0 \(offsets \d+-\d+\), 1 .*\n$`, stderr)
	})
	t.Run("verify draws a progress bar", func(t *testing.T) {
		shown, _, _ := onTerminal(t, bin, []string{"stdout", "stderr"}, "verify")
		require.Regexp(t, `\rverify \[=+\] 100% (\d+)/(\d+) bytes\r?\n`, shown)
		require.Contains(t, shown, "no problems found")
		_, stdout, stderr := onTerminal(t, bin, nil, "verify")
		require.Empty(t, stderr)
		require.Contains(t, stdout, "no problems found")
	})
	t.Run("compact draws a progress bar over the topics", func(t *testing.T) {
		out, err := exec.Command(bin, "topics", "create", "prices", "--config", "cleanup.policy=compact").CombinedOutput()
		require.NoError(t, err, "%s", out)
		shown, _, _ := onTerminal(t, bin, []string{"stdout", "stderr"}, "compact")
		require.Regexp(t, `\rcompacting \[=+\] 100% 1/1 topics\r?\n`, shown)
		checkAligned(t, strings.ReplaceAll(shown[strings.Index(shown, "TOPIC"):], "\r\n", "\n"))
		_, stdout, stderr := onTerminal(t, bin, nil, "compact")
		require.Empty(t, stderr)
		require.Contains(t, stdout, "prices")
	})
	t.Run("tables aligned", func(t *testing.T) {
		for _, args := range [][]string{{"topics", "list"}, {"topics", "describe", "events"}} {
			shown, _, _ := onTerminal(t, bin, []string{"stdout", "stderr"}, args...)
			require.NotContains(t, shown, "\t\t", "tabs expanded to spaces")
			checkAligned(t, strings.ReplaceAll(shown, "\r\n", "\n"))
		}
	})
}

// checkAligned checks each table of out (a header row of upper-case
// words, then rows, up to a blank line): every cell of a row starts in
// the column its header starts in.
func checkAligned(t *testing.T, out string) {
	t.Helper()
	header := regexp.MustCompile(`^[A-Z#-]+(  +[A-Z#-]+)+$`)
	var starts []int
	tables := 0
	for _, line := range strings.Split(out, "\n") {
		switch {
		case header.MatchString(line):
			starts = cellStarts(line)
			tables++
		case line == "" || strings.HasPrefix(line, "Topic:"):
			starts = nil
		case starts != nil:
			got := cellStarts(line)
			require.Equal(t, starts, got[:min(len(got), len(starts))], "row %q under columns at %v", line, starts)
		}
	}
	require.NotZero(t, tables, "a table in %q", out)
}

// cellStarts returns where the cells of a table row start: after two or
// more spaces (a cell holds single spaces, as "0 B").
func cellStarts(line string) []int {
	starts := []int{0}
	for _, m := range regexp.MustCompile(`  +`).FindAllStringIndex(line, -1) {
		starts = append(starts, m[1])
	}
	return starts
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}
