package soak

import (
	"fmt"
	"sync"
)

// Guest memory is the linear memory of each plugin VM (wasmhost
// Stats.VMMemoryBytes), sampled every 2.5% of the run's calls. A Wasm
// memory never shrinks, and a Go guest grows it a heap arena (4 MiB) at a
// time, so a VM's samples are a staircase. A healthy guest's steps thin out
// as its heap reaches its steady size, which it does late (PERF-NOTES: 5.0
// MiB at 10k requests, 8.1 at 200k, flat after): one step late in a run is
// no alarm. A GC that falls behind under load, or a leak, climbs as fast
// as traffic, or jumps (defect 9: 8 → 67 MiB within the last third of a
// run). So the verdict compares two late windows of the same VM life, the
// third and the fourth quarter of the run's calls:
//
//   - a jump: the fourth quarter grew by more than jumpMiB (two arenas);
//   - keeps growing: both quarters grew, each by at least stepMiB.
//
// VMs restarted inside the windows (the restarted replica) have no such
// pair and only count toward the maximum.
const (
	jumpMiB = 8.0
	stepMiB = 1.0
)

const mib = 1 << 20

// memSample is the linear memory of every VM at one point of the run.
type memSample struct {
	calls int64
	lives []int      // per replica: its life
	bytes [][]uint32 // per replica, per VM
}

// memory collects the samples.
type memory struct {
	mu      sync.Mutex
	samples []memSample
}

func (m *memory) sample(t *topology, calls int64) {
	s := memSample{calls: calls}
	for _, r := range t.replicas {
		gen, b := r.memory()
		s.lives = append(s.lives, gen)
		s.bytes = append(s.bytes, b)
	}
	m.mu.Lock()
	m.samples = append(m.samples, s)
	m.mu.Unlock()
}

// MemoryVerdict is what the samples say about guest memory.
type MemoryVerdict struct {
	MaxMiB, EndMiB float64 // the largest VM ever, the largest VM at the end
	// ThirdMiB and FourthMiB are the largest growth of one VM life over the
	// third and the fourth quarter of the run's calls.
	ThirdMiB, FourthMiB float64
	VMs                 int // VM lives seen over both late windows
	Samples             int
	Growing             string // why memory keeps growing; "" if it does not
}

// verdict judges the samples (see the constants above).
func (m *memory) verdict() MemoryVerdict {
	m.mu.Lock()
	defer m.mu.Unlock()
	var v MemoryVerdict
	v.Samples = len(m.samples)
	if len(m.samples) == 0 {
		v.Growing = "no memory sample"
		return v
	}
	for _, s := range m.samples {
		for _, vms := range s.bytes {
			for _, b := range vms {
				v.MaxMiB = max(v.MaxMiB, float64(b)/mib)
			}
		}
	}
	last := m.samples[len(m.samples)-1]
	for _, vms := range last.bytes {
		for _, b := range vms {
			v.EndMiB = max(v.EndMiB, float64(b)/mib)
		}
	}
	half, third := m.at(last.calls/2), m.at(last.calls*3/4)
	for r := range last.bytes {
		if half.lives[r] != last.lives[r] || third.lives[r] != last.lives[r] {
			continue
		}
		for vm := range last.bytes[r] {
			v.VMs++
			g1 := float64(third.bytes[r][vm]) - float64(half.bytes[r][vm])
			g2 := float64(last.bytes[r][vm]) - float64(third.bytes[r][vm])
			g1, g2 = g1/mib, g2/mib
			v.ThirdMiB, v.FourthMiB = max(v.ThirdMiB, g1), max(v.FourthMiB, g2)
			switch {
			case v.Growing != "":
			case g2 > jumpMiB:
				v.Growing = fmt.Sprintf("replica %d VM %d grew %.1f MiB in the last quarter of the calls (more than %.0f MiB)", r, vm, g2, jumpMiB)
			case g1 >= stepMiB && g2 >= stepMiB:
				v.Growing = fmt.Sprintf("replica %d VM %d keeps growing: %.1f MiB in the third quarter of the calls, %.1f MiB in the fourth", r, vm, g1, g2)
			}
		}
	}
	if v.VMs == 0 && v.Growing == "" {
		v.Growing = "no VM lived through both late windows"
	}
	return v
}

// at returns the first sample taken at or after calls completed calls.
func (m *memory) at(calls int64) memSample {
	for _, s := range m.samples {
		if s.calls >= calls {
			return s
		}
	}
	return m.samples[len(m.samples)-1]
}
