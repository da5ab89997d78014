//go:build !linux

package main

import "runtime/debug"

// limitMemory: elsewhere only the garbage collector's soft limit.
func limitMemory(bytes uint64) {
	debug.SetMemoryLimit(int64(bytes / 4))
}
