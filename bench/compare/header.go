package main

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// header is where and how the table was made.
type header struct {
	Date    string `json:"date"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	CPU     string `json:"cpu"`
	CPUs    int    `json:"cpus"`
	Dir     string `json:"dir"`
	FS      string `json:"fs"`
	Command string `json:"command"`
}

func newHeader(cfg *config, root string) header {
	return header{
		Date:    time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		Go:      runtime.Version(),
		OS:      runtime.GOOS + "/" + runtime.GOARCH,
		CPU:     cpuModel(),
		CPUs:    runtime.NumCPU(),
		Dir:     cfg.dir,
		FS:      fileSystem(root),
		Command: commandLine(),
	}
}

// commandLine is the program's command line as a shell would take it back.
func commandLine() string {
	parts := []string{"go run ./compare"}
	for _, a := range os.Args[1:] {
		if strings.ContainsAny(a, " \t'\"$\\*?") {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
