package main

import (
	"runtime/debug"
	"syscall"
)

// limitMemory caps the address space (a hard limit: allocation beyond it fails and the process exits) and
// tells the garbage collector to stay well below it.
func limitMemory(bytes uint64) {
	debug.SetMemoryLimit(int64(bytes / 4))
	_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: bytes, Max: bytes})
}
