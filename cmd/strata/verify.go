package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stratalog/strata"
)

func init() { commands = append(commands, newVerifyCmd) }

func newVerifyCmd(a *app) *cobra.Command {
	var topic string
	var repair bool
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check every batch, CRC, index and checkpoint of the directory",
		Long: `verify checks the directory without writing anything and without its lock,
so it works on a directory a running process holds: every batch of every
segment (header, CRC, offsets increasing as the segment names imply), every
.index and .timeindex (entries increasing, within the log, at batch starts
whose offsets match), the checkpoints, producer snapshots, .txnindex files,
partition.metadata and topics.json. Each finding names its file, the byte
position, and what recovery would do about it. On a live directory the tail
of a partition's last segment may be being written: that is a note, not
damage.

--repair, when there is damage, opens the directory as a store (which
refuses a directory another process holds) as any Open does, then again
with the clean-shutdown marker and the recovery points removed, so that
every segment is recovered as after a crash (torn and damaged tails cut,
later segments kept, indexes rebuilt); it prints what the store reported
doing in each pass, and verifies again.

Exit status: 0 nothing damaged, 4 damage found (after --repair: damage left).`,
		Example: `  strata verify
  strata verify --topic orders -o json
  strata verify --repair`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := a.needDir()
			if err != nil {
				return err
			}
			rep, err := a.verify(dir, topic)
			if err != nil {
				return err
			}
			out := verifyJSON{Report: toVerifyJSON(dir, rep)}
			if !a.json() {
				if err := a.printVerify(dir, rep); err != nil {
					return err
				}
			}
			if repair && rep.Damaged() {
				log, err := a.repair(dir, topic)
				if err != nil {
					return err
				}
				after, err := a.verify(dir, topic)
				if err != nil {
					return err
				}
				out.Repair = &repairJSON{Log: log, After: toVerifyJSON(dir, after)}
				if !a.json() {
					if err := a.printRepair(dir, log, after); err != nil {
						return err
					}
				}
				rep = after
			} else if repair {
				fmt.Fprintln(a.stderr, "strata: no damage: --repair changed nothing")
			}
			if a.json() {
				if err := a.writeJSON(out); err != nil {
					return err
				}
			}
			if n := damageCount(rep); n > 0 {
				what := "damage found"
				if repair {
					what = "damage left after the repair"
				}
				return exitError{code: exitDamage, err: fmt.Errorf("%s: %d problem(s)", what, n)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&topic, "topic", "", "check only this topic's partitions")
	cmd.Flags().BoolVar(&repair, "repair", false, "recover the damage as Open does after a crash, and say what was dropped")
	return cmd
}

// verify runs the check, with a progress bar on a terminal.
func (a *app) verify(dir, topic string) (*strata.VerifyReport, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	p := a.newProgress("verify", 0, "bytes")
	rep, err := strata.Verify(dir, &strata.VerifyOptions{Topic: topic, Progress: func(done, total int64) {
		p.total = total
		p.add(done - p.done)
	}})
	p.finish()
	return rep, err
}

func damageCount(rep *strata.VerifyReport) int {
	n := 0
	for _, f := range rep.Findings {
		if f.Damage {
			n++
		}
	}
	return n
}

// verifyJSON is verify's -o json output.
type verifyJSON struct {
	Report reportJSON  `json:"report"`
	Repair *repairJSON `json:"repair,omitempty"`
}

type reportJSON struct {
	Dir           string        `json:"dir"`
	Live          bool          `json:"live"`
	CleanShutdown bool          `json:"clean_shutdown"`
	Partitions    int           `json:"partitions"`
	Segments      int           `json:"segments"`
	Batches       int64         `json:"batches"`
	Bytes         int64         `json:"bytes"`
	Files         int           `json:"files"`
	Damaged       bool          `json:"damaged"`
	Findings      []findingJSON `json:"findings"`
}

type findingJSON struct {
	File     string `json:"file"`
	Position int64  `json:"position"`
	Damage   bool   `json:"damage"`
	Problem  string `json:"problem"`
	Recovery string `json:"recovery"`
}

type repairJSON struct {
	Log   []repairEntry `json:"log"`
	After reportJSON    `json:"after"`
}

func toVerifyJSON(dir string, rep *strata.VerifyReport) reportJSON {
	out := reportJSON{Dir: dir, Live: rep.Live, CleanShutdown: rep.Clean, Partitions: rep.Partitions,
		Segments: rep.Segments, Batches: rep.Batches, Bytes: rep.Bytes, Files: rep.Files,
		Damaged: rep.Damaged(), Findings: []findingJSON{}}
	for _, f := range rep.Findings {
		out.Findings = append(out.Findings, findingJSON{File: relPath(dir, f.File), Position: f.Position,
			Damage: f.Damage, Problem: f.Problem, Recovery: f.Recovery})
	}
	return out
}

// relPath is path relative to dir, for shorter lines.
func relPath(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// printVerify prints a report: a summary line, then a table of findings.
func (a *app) printVerify(dir string, rep *strata.VerifyReport) error {
	state := "closed cleanly"
	switch {
	case rep.Live:
		state = "live: held by a running process"
	case !rep.Clean:
		state = "not closed cleanly"
	}
	fmt.Fprintf(a.stdout, "%s (%s): %s, %s, %s, %s, %s checked\n", dir, state,
		plural(int64(rep.Partitions), "partition"), plural(int64(rep.Segments), "segment"), plural(rep.Batches, "batch"),
		plural(rep.Bytes, "byte"), plural(int64(rep.Files), "other file"))
	if len(rep.Findings) == 0 {
		fmt.Fprintln(a.stdout, "no problems found")
		return nil
	}
	return printFindings(a.stdout, dir, rep.Findings)
}

func printFindings(w io.Writer, dir string, findings []strata.VerifyFinding) error {
	t := newTable(w, "FILE", "POSITION", "FINDING", "PROBLEM", "RECOVERY")
	for _, f := range findings {
		pos, kind := "-", "note"
		if f.Position >= 0 {
			pos = fmt.Sprint(f.Position)
		}
		if f.Damage {
			kind = "damage"
		}
		t.row(relPath(dir, f.File), pos, kind, f.Problem, f.Recovery)
	}
	return t.flush()
}

func (a *app) printRepair(dir string, log []repairEntry, after *strata.VerifyReport) error {
	fmt.Fprintln(a.stdout)
	fmt.Fprintln(a.stdout, "repair: pass 1 opened the store as any Open does; pass 2 recovered every segment as after a crash")
	if len(log) == 0 {
		fmt.Fprintln(a.stdout, "recovery reported nothing cut or rebuilt")
	} else {
		t := newTable(a.stdout, "PASS", "RECOVERY", "DETAILS")
		for _, e := range log {
			var parts []string
			for _, k := range e.order {
				parts = append(parts, k+"="+e.Attrs[k])
			}
			t.row(e.Pass, e.Message, strings.Join(parts, " "))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(a.stdout)
	fmt.Fprint(a.stdout, "after the repair: ")
	return a.printVerify(dir, after)
}

// plural is "1 batch", "2 batches".
func plural(n int64, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "ch"):
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
