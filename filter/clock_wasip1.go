//go:build wasip1

package main

// unixNow returns the wall clock in whole seconds, the time records and
// tombstones are kept in: one clock_time_get (realtime), where time.Now
// makes two (the wall clock and the monotonic one), a host call each on the
// resume path.
func unixNow() uint32 {
	if clockTimeGet(clockRealtime, 1e9, &clockOut) != 0 {
		return 0
	}
	return uint32(clockOut / 1e9)
}

// clockRealtime is WASI's realtime clock.
const clockRealtime = 0

// clockOut receives clock_time_get's out-parameter (a package variable:
// the guest is single-threaded, and the host never sees a stack address).
var clockOut uint64

//go:wasmimport wasi_snapshot_preview1 clock_time_get
//go:noescape
func clockTimeGet(id uint32, precision uint64, time *uint64) uint32
