package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newDumpCmd) }

// dumpFlags are dump's options, named as kafka-dump-log's.
type dumpFlags struct {
	files     []string
	deep      bool
	printData bool
	sanity    bool
	offsets   bool
	txnLog    bool
}

func newDumpCmd(a *app) *cobra.Command {
	var f dumpFlags
	cmd := &cobra.Command{
		Use:   "dump [--files] FILE[,FILE...]",
		Short: "Print the batches, records and index entries of segment files, as kafka-dump-log does",
		Long: `dump prints what segment files hold, line by line as Kafka's kafka-dump-log
--files prints it, for Strata's files and Kafka's own: the batches of .log
files (--deep-iteration: their records; --print-data-log: keys and values
too), the entries of .index and .timeindex files (checked against their
.log, mismatches reported as Kafka reports them; --index-sanity-check: only
Kafka's sanity check), the producers of .snapshot files, the aborted
transactions of .txnindex files and the topic id of partition.metadata.

--offsets-decoder decodes the records of __consumer_offsets (committed
offsets and group metadata), --transaction-log-decoder those of
__transaction_state. -o json prints the same as JSON lines.

The files are only read. Damage is reported with its position and the
reason ("Found ... at position ..."): a batch that fails its CRC is printed
with isvalid: false and the dump goes on with the next batch; bytes that do
not read as a batch (a torn tail) end the file's dump, as Kafka's does.
Either way the exit status is 4.`,
		Example: `  strata dump --files orders-0/00000000000000000000.log
  strata dump --deep-iteration --print-data-log orders-0/00000000000000000000.log
  strata dump --files orders-0/00000000000000000000.index,orders-0/00000000000000000000.timeindex
  strata dump --offsets-decoder __consumer_offsets-0/00000000000000000000.log -o json`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 && len(f.files) == 0 {
				return usagef("no file to dump: give --files FILE[,FILE...] or the files as arguments")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.files = append(f.files, args...)
			if f.offsets || f.txnLog {
				f.printData = true // as kafka-dump-log: a decoder implies --print-data-log
			}
			if f.printData {
				f.deep = true // which implies --deep-iteration
			}
			if f.offsets && f.txnLog {
				return usagef("--offsets-decoder and --transaction-log-decoder: give one")
			}
			for _, name := range f.files {
				info, err := os.Stat(name)
				if err != nil {
					return usagef("%s: no such file", name)
				}
				if info.IsDir() {
					return usagef("%s is a directory: give its files (%s)", name, filepath.Join(name, "*.log"))
				}
			}
			d := &dumper{a: a, flags: f, out: a.stdout}
			for _, name := range f.files {
				if err := d.dumpFile(name); err != nil {
					return err
				}
			}
			d.printErrors()
			if d.damaged > 0 {
				return exitError{code: exitDamage, err: fmt.Errorf("damage found in %d file(s)", d.damaged)}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.files, "files", nil, "the files to dump, comma-separated (.log, .index, .timeindex, .snapshot, .txnindex, partition.metadata)")
	fl.BoolVar(&f.deep, "deep-iteration", false, "print every record of each batch")
	fl.BoolVar(&f.printData, "print-data-log", false, "print the records' keys and values (implies --deep-iteration)")
	fl.BoolVar(&f.sanity, "index-sanity-check", false, "only run Kafka's sanity check of index files")
	fl.BoolVar(&f.offsets, "offsets-decoder", false, "decode the records of __consumer_offsets")
	fl.BoolVar(&f.txnLog, "transaction-log-decoder", false, "decode the records of __transaction_state")
	return cmd
}

// dumper dumps files one after another, and collects the index
// mismatches kafka-dump-log reports after them.
type dumper struct {
	a       *app
	flags   dumpFlags
	out     io.Writer
	damaged int // files with damage

	indexMismatches   []mismatch // Kafka's "Mismatches in :<file>"
	timeMismatches    []mismatch // "Found timestamp mismatch in :<file>"
	timeOutOfOrder    []mismatch // "Found out of order timestamp in :<file>"
	timeNotFound      []mismatch // "The following indexed offsets are not found in the log."
	nonConsecutive    []mismatch // "Non-consecutive offsets in <file>"
	damagedInThisFile bool
}

// mismatch is a pair kafka-dump-log reports after the dump.
type mismatch struct {
	file string
	a, b int64
}

// field is one "name: value" of a line; json is its name in -o json. A
// field without a name is printed by -o json only, one without a json
// name by the text only.
type field struct {
	name, json string
	value      any
}

// emit prints a line of fields: "name: value name: value" (after prefix),
// or, with -o json, an object of kind with the fields and the file.
func (d *dumper) emit(kind, file, prefix string, fields ...field) {
	if d.a.json() {
		obj := make(map[string]any, len(fields)+2)
		obj["kind"], obj["file"] = kind, file
		for _, f := range fields {
			if f.json != "" {
				obj[f.json] = f.value
			}
		}
		b, _ := json.Marshal(obj)
		fmt.Fprintf(d.out, "%s\n", b)
		return
	}
	var sb strings.Builder
	sb.WriteString(prefix)
	for _, f := range fields {
		if f.name == "" {
			continue // -o json only
		}
		if sb.Len() > len(prefix) {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%s: %v", f.name, f.value)
	}
	fmt.Fprintln(d.out, sb.String())
}

// damage reports damage in file at pos, as a line of its own.
func (d *dumper) damage(file string, pos, bytes int64, reason string) {
	d.damagedInThisFile = true
	if d.a.json() {
		d.emit("damage", file, "", field{json: "position", value: pos}, field{json: "invalid_bytes", value: bytes}, field{json: "reason", value: reason})
		return
	}
	if strings.HasSuffix(file, ".log") {
		fmt.Fprintf(d.out, "Found %d invalid bytes at the end of %s at position %d: %s\n", bytes, filepath.Base(file), pos, reason)
		return
	}
	fmt.Fprintf(d.out, "Found damage in %s at position %d: %s\n", filepath.Base(file), pos, reason)
}

// dumpFile dumps one file by its suffix, as kafka-dump-log does.
func (d *dumper) dumpFile(name string) error {
	d.damagedInThisFile = false
	if !d.a.json() {
		fmt.Fprintf(d.out, "Dumping %s\n", name)
	}
	var err error
	base := filepath.Base(name)
	switch {
	case strings.HasSuffix(base, ".log"):
		err = d.dumpLog(name)
	case strings.HasSuffix(base, ".index"):
		err = d.dumpIndex(name)
	case strings.HasSuffix(base, ".timeindex"):
		err = d.dumpTimeIndex(name)
	case strings.HasSuffix(base, ".snapshot"):
		err = d.dumpSnapshot(name)
	case strings.HasSuffix(base, ".txnindex"):
		err = d.dumpTxnIndex(name)
	case base == "partition.metadata":
		err = d.dumpMetadata(name)
	default:
		fmt.Fprintf(d.a.stderr, "Ignoring unknown file %s\n", name)
	}
	if d.damagedInThisFile {
		d.damaged++
	}
	return err
}

// printErrors prints the mismatches found, after every file, as
// kafka-dump-log prints them (on stderr; with -o json, on stdout as
// lines of their own).
func (d *dumper) printErrors() {
	groups := []struct {
		list   []mismatch
		kind   string
		header func(file string) string
		line   string
		a, b   string
	}{
		{d.indexMismatches, "index_mismatch", func(f string) string { return "Mismatches in :" + f }, "  Index offset: %d, log offset: %d", "index_offset", "log_offset"},
		{d.timeMismatches, "time_index_mismatch", func(f string) string { return "Found timestamp mismatch in :" + f }, "  Index timestamp: %d, log timestamp: %d", "index_timestamp", "log_timestamp"},
		{d.timeOutOfOrder, "time_index_out_of_order", func(f string) string { return "Found out of order timestamp in :" + f }, "  Index timestamp: %d, Previously indexed timestamp: %d", "index_timestamp", "previous_timestamp"},
		{d.timeNotFound, "time_index_offset_not_found", func(string) string { return "The following indexed offsets are not found in the log." }, "Indexed offset: %d, found log offset: %d", "index_offset", "log_offset"},
		{d.nonConsecutive, "non_consecutive_offsets", func(f string) string { return "Non-consecutive offsets in " + f }, "  %d is followed by %d", "offset", "next_offset"},
	}
	for _, g := range groups {
		last := ""
		for _, m := range g.list {
			if d.a.json() {
				d.emit(g.kind, m.file, "", field{json: g.a, value: m.a}, field{json: g.b, value: m.b})
				continue
			}
			if m.file != last {
				abs, _ := filepath.Abs(m.file)
				fmt.Fprintln(d.a.stderr, g.header(abs))
				last = m.file
			}
			fmt.Fprintf(d.a.stderr, g.line+"\n", m.a, m.b)
		}
	}
}
