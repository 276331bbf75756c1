package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"strata": func() { os.Exit(run(os.Args[1:])) },

		// Holds a directory's lock, as a running service does.
		"strata-hold-lock": func() { os.Exit(holdLock()) },
		// Holds a directory with a Consumer in a group.
		"strata-group-member": func() { os.Exit(groupMember()) },
	})
}

// TestScripts runs the script tests in testdata/script: each file is a
// session of strata commands with their expected output (see
// github.com/rogpeppe/go-internal/testscript for the format).
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("STRATA_DIR", env.WorkDir+"/data")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitfile":   waitFile,
			"exitstatus": exitStatus,
			// dump and verify
			"mkstore":     cmdMkstore,
			"kafkadir":    cmdKafkadir,
			"flipbyte":    cmdFlipbyte,
			"cutbytes":    cmdCutbytes,
			"hashes":      cmdHashes,
			"holdlock":    cmdHoldlock,
			"releaselock": cmdReleaselock,
			"tornappend":  cmdTornappend,
			"replacein":   cmdReplacein,
			// serve and maintenance
			"fillstore": fillStoreCmd, // maintenance_script_test.go
			// mirror (mirror_script_test.go)
			"kfake":        cmdKfake,
			"kafkarecords": cmdKafkaRecords,
			"kafkagroup":   cmdKafkaGroup,
		},
	})
}
