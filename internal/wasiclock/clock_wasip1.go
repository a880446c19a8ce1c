//go:build wasip1

// Package wasiclock reads the wall clock in whole seconds with one WASI
// call: the time the guard keeps records and tombstones in. time.Now makes
// two host calls under wasip1 (the wall clock and the monotonic one); on the
// resume path each is a round trip into the host.
package wasiclock

// Unix returns the wall clock in whole seconds (0 when the host refuses).
func Unix() uint32 {
	if clockTimeGet(realtime, 1e9, &out) != 0 {
		return 0
	}
	return uint32(out / 1e9)
}

// realtime is WASI's realtime clock.
const realtime = 0

// out receives clock_time_get's out-parameter (a package variable: the
// guest is single-threaded, and the host never sees a stack address).
var out uint64

//go:wasmimport wasi_snapshot_preview1 clock_time_get
//go:noescape
func clockTimeGet(id uint32, precision uint64, time *uint64) uint32
