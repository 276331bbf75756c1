//go:build !linux

package main

func cpuModel() string { return "unknown" }

func fileSystem(string) string { return "unknown" }
