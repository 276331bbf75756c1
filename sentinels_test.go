package strata_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/compaction"
	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/index"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/txn"
	"github.com/stratalog/strata/vfs"
)

// lowerSentinel is an exported Err variable of a package below the root:
// the root sentinel an error wrapping it matches once a Store call returns
// it, or (root nil) why no Store call returns it.
type lowerSentinel struct {
	err  error
	root error
	why  string
}

// lowerSentinels lists every exported Err variable of the packages below
// the root (TestEveryLowerSentinelHasARootOne checks that none is missing).
var lowerSentinels = map[string]lowerSentinel{
	"compaction.ErrInvalid":             {compaction.ErrInvalid, nil, "the partition's own arguments to the cleaner"},
	"compaction.ErrMapTooSmall":         {compaction.ErrMapTooSmall, strata.ErrInvalidConfig, ""},
	"group.ErrBadRecord":                {group.ErrBadRecord, nil, "Open skips and logs a damaged commit record"},
	"group.ErrFenced":                   {group.ErrFenced, strata.ErrFenced, ""},
	"group.ErrGroupActive":              {group.ErrGroupActive, strata.ErrGroupActive, ""},
	"group.ErrGroupClaimed":             {group.ErrGroupClaimed, strata.ErrGroupClaimed, ""},
	"group.ErrInvalidGroup":             {group.ErrInvalidGroup, strata.ErrInvalidGroup, ""},
	"group.ErrInvalidOffset":            {group.ErrInvalidOffset, strata.ErrOffsetOutOfRange, ""},
	"group.ErrInvalidProducer":          {group.ErrInvalidProducer, nil, "the store's transactions commit offsets with the producer ids and epochs they were given"},
	"group.ErrMetadataTooLarge":         {group.ErrMetadataTooLarge, strata.ErrMetadataTooLarge, ""},
	"group.ErrNoOffset":                 {group.ErrNoOffset, strata.ErrNoOffset, ""},
	"group.ErrNotOffsetCommit":          {group.ErrNotOffsetCommit, nil, "Open skips Kafka's other __consumer_offsets records"},
	"group.ErrNotGroupMetadata":         {group.ErrNotGroupMetadata, nil, "Open skips Kafka's other __consumer_offsets records"},
	"group.ErrUnknownGroup":             {group.ErrUnknownGroup, strata.ErrUnknownGroup, ""},
	"group.ErrNotOwner":                 {group.ErrNotOwner, strata.ErrNotOwner, ""},
	"group.ErrTxnUnsupported":           {group.ErrTxnUnsupported, nil, "the store's offset log takes transactional commits"},
	"group.ErrUnknownMember":            {group.ErrUnknownMember, strata.ErrFenced, ""},
	"group.ErrUnknownPartition":         {group.ErrUnknownPartition, strata.ErrUnknownPartition, ""},
	"index.ErrCorrupt":                  {index.ErrCorrupt, nil, "a damaged index is rebuilt at Open"},
	"index.ErrFull":                     {index.ErrFull, nil, "a full index rolls the segment"},
	"index.ErrOffsetOverflow":           {index.ErrOffsetOverflow, nil, "an offset past the index's reach rolls the segment"},
	"index.ErrOutOfOrder":               {index.ErrOutOfOrder, nil, "the partition appends entries in order"},
	"index.ErrSealed":                   {index.ErrSealed, nil, "the partition writes to the active segment only"},
	"log.ErrCorrupt":                    {log.ErrCorrupt, strata.ErrCorrupt, ""},
	"log.ErrEmptyBatch":                 {log.ErrEmptyBatch, strata.ErrNoRecords, ""},
	"log.ErrIncomplete":                 {log.ErrIncomplete, strata.ErrCorrupt, ""},
	"log.ErrInvalidBatch":               {log.ErrInvalidBatch, nil, "what would make one is refused before encoding (ErrBatchTooLarge, ErrInvalidConfig)"},
	"log.ErrTooLarge":                   {log.ErrTooLarge, strata.ErrDecompressedTooLarge, ""},
	"log.ErrUnsupportedCompression":     {log.ErrUnsupportedCompression, strata.ErrUnsupportedCompression, ""},
	"log.ErrUnsupportedFormat":          {log.ErrUnsupportedFormat, strata.ErrUnsupportedFormat, ""},
	"partition.ErrBatchTooLarge":        {partition.ErrBatchTooLarge, strata.ErrBatchTooLarge, ""},
	"partition.ErrClosed":               {partition.ErrClosed, strata.ErrClosed, ""},
	"partition.ErrReadOnly":             {partition.ErrReadOnly, strata.ErrReadOnly, ""},
	"partition.ErrCorruptCheckpoint":    {partition.ErrCorruptCheckpoint, strata.ErrCorrupt, ""},
	"partition.ErrCorruptSnapshot":      {partition.ErrCorruptSnapshot, strata.ErrCorrupt, ""},
	"partition.ErrEmptyBatch":           {partition.ErrEmptyBatch, strata.ErrNoRecords, ""},
	"partition.ErrInvalidConfig":        {partition.ErrInvalidConfig, strata.ErrInvalidConfig, ""},
	"partition.ErrNoKey":                {partition.ErrNoKey, strata.ErrNoKey, ""},
	"partition.ErrNoRecord":             {partition.ErrNoRecord, strata.ErrNoRecord, ""},
	"partition.ErrOutOfRange":           {partition.ErrOutOfRange, strata.ErrOffsetOutOfRange, ""},
	"partition.ErrOutOfOrderSequence":   {partition.ErrOutOfOrderSequence, strata.ErrOutOfOrderSequence, ""},
	"partition.ErrProducerFenced":       {partition.ErrProducerFenced, strata.ErrProducerFenced, ""},
	"partition.ErrInvalidProducer":      {partition.ErrInvalidProducer, strata.ErrInvalidProducer, ""},
	"partition.ErrInvalidTxnState":      {partition.ErrInvalidTxnState, strata.ErrInvalidTxnState, ""},
	"partition.ErrCoordinatorFenced":    {partition.ErrCoordinatorFenced, nil, "the store's transaction coordinator writes every marker at coordinator epoch 0"},
	"partition.ErrTimestampTooFarAhead": {partition.ErrTimestampTooFarAhead, strata.ErrTimestampTooFarAhead, ""},
	"partition.ErrWrongKey":             {partition.ErrWrongKey, strata.ErrWrongKey, ""},
	"partition.ErrPendingTransaction":   {partition.ErrPendingTransaction, strata.ErrPendingTransaction, ""},
	"partition.ErrWrongOffset":          {partition.ErrWrongOffset, strata.ErrWrongOffset, ""},
	"segment.ErrBadName":                {segment.ErrBadName, nil, "Open skips files that are not segments"},
	"segment.ErrClosed":                 {segment.ErrClosed, nil, "segments are reference-counted: none closes under a reader"},
	"segment.ErrCorrupt":                {segment.ErrCorrupt, strata.ErrCorrupt, ""},
	"segment.ErrFull":                   {segment.ErrFull, nil, "a full segment rolls"},
	"segment.ErrInvalidBatch":           {segment.ErrInvalidBatch, nil, "the partition appends batches it encoded or checked"},
	"segment.ErrSealed":                 {segment.ErrSealed, nil, "the partition appends to the active segment only"},
	"segment.ErrSync":                   {segment.ErrSync, nil, "a failed fsync fails the partition: its errors are then ErrClosed, wrapping it"},
	"topic.ErrInvalidConfig":            {topic.ErrInvalidConfig, strata.ErrInvalidConfig, ""},
	"topic.ErrInvalidID":                {topic.ErrInvalidID, nil, "ids are parsed from the store's own files, whose damage is ErrCorrupt"},
	"topic.ErrInvalidName":              {topic.ErrInvalidName, strata.ErrInvalidTopic, ""},
	"topic.ErrNoPartition":              {topic.ErrNoPartition, strata.ErrUnknownPartition, ""},
	"txn.ErrBadRecord":                  {txn.ErrBadRecord, nil, "Open skips a damaged transaction state record, with a warning"},
	"txn.ErrNotTxnRecord":               {txn.ErrNotTxnRecord, nil, "Open skips records of other types in __transaction_state"},
	"vfs.ErrCrashed":                    {vfs.ErrCrashed, nil, "a Mem crashed by a test"},
	"vfs.ErrFault":                      {vfs.ErrFault, nil, "an I/O error, returned as it is (as EIO would be)"},
	"vfs.ErrInjected":                   {vfs.ErrInjected, nil, "a failure a test injected"},
	"vfs.ErrMapped":                     {vfs.ErrMapped, nil, "the segment grows a file only while it is unmapped"},
}

// TestEveryLowerSentinelHasARootOne checks that an error of a package below
// the root, once a Store call returns it, matches a root sentinel, so that
// no user needs to import those packages to match an error, and that the
// table lists every exported Err variable of them.
func TestEveryLowerSentinelHasARootOne(t *testing.T) {
	for _, dir := range []string{"compaction", "group", "index", "log", "partition", "segment", "topic", "txn", "vfs"} {
		for _, name := range exportedErrVars(t, dir) {
			_, ok := lowerSentinels[dir+"."+name]
			require.True(t, ok, "%s.%s is missing from lowerSentinels", dir, name)
		}
	}
	for name, ls := range lowerSentinels {
		t.Run(name, func(t *testing.T) {
			if ls.root == nil {
				require.NotEmpty(t, ls.why)
				return
			}
			// As a Store call returns it: wrapped by its layer, then by
			// the store.
			err := strata.StoreErr(fmt.Errorf("partition: reading orders-0 at 7: %w", ls.err))
			require.ErrorIs(t, err, ls.root)
			require.ErrorIs(t, err, ls.err)
		})
	}
}

// exportedErrVars returns the names of the exported variables of the
// package in dir that start with Err.
func exportedErrVars(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var names []string
	fset := token.NewFileSet()
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, path, src, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if n.IsExported() && strings.HasPrefix(n.Name, "Err") {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	require.NotEmpty(t, names, "no Err variables in %s", dir)
	return names
}
