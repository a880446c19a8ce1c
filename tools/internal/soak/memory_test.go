package soak

import (
	"strings"
	"testing"
)

// samplesOf returns samples of one replica with one VM, the memory at
// each quarter of 400 calls given in MiB; restartAt, if > 0, starts a new
// life at that sample.
func samplesOf(mibs []float64, restartAt int) *memory {
	m := &memory{}
	for i, v := range mibs {
		life := 0
		if restartAt > 0 && i >= restartAt {
			life = 1
		}
		m.samples = append(m.samples, memSample{calls: int64(100 * i), lives: []int{life}, bytes: [][]uint32{{uint32(v * mib)}}})
	}
	return m
}

func TestMemoryVerdict(t *testing.T) {
	for _, c := range []struct {
		name      string
		mibs      []float64 // at 0, 100, 200, 300, 400 calls
		restartAt int
		growing   string // in the verdict; "" for none
	}{
		{"flat", []float64{4, 4, 4, 4, 4}, 0, ""},
		{"early steps, flat late", []float64{4, 8, 12, 12, 12}, 0, ""},
		{"one step in the third quarter", []float64{4, 4, 4, 8, 8}, 0, ""},
		{"one step in the fourth quarter", []float64{4, 4, 4, 4, 8}, 0, ""},
		{"two arenas at once, late", []float64{4, 4, 4, 4, 12}, 0, ""},
		{"pages, not arenas", []float64{4, 4, 4, 4.5, 5}, 0, ""},
		{"a step in each late quarter", []float64{4, 4, 4, 8, 12}, 0, "keeps growing: 4.0 MiB in the third quarter of the calls, 4.0 MiB in the fourth"},
		{"linear leak", []float64{4, 6, 8, 10, 12}, 0, "keeps growing"},
		{"defect 9: a late jump", []float64{8, 8, 8, 8, 67}, 0, "grew 59.0 MiB in the last quarter"},
		{"restarted inside the windows", []float64{4, 8, 8, 4, 12}, 3, "no VM lived through both late windows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := samplesOf(c.mibs, c.restartAt).verdict()
			if c.growing == "" && v.Growing != "" || c.growing != "" && !strings.Contains(v.Growing, c.growing) {
				t.Errorf("verdict %q, want %q (%+v)", v.Growing, c.growing, v)
			}
			if v.MaxMiB != 67 && c.name == "defect 9: a late jump" {
				t.Errorf("max %v MiB, want 67", v.MaxMiB)
			}
		})
	}
}

func TestLayoutOf(t *testing.T) {
	body := "id: http:e-1\ndata: \n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\nid: http:e-2\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\nid: ~1r1.x\n\n"
	l, ok := layoutOf([]byte(body))
	start := strings.Index(body, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3")
	if !ok || l.start != int64(start) || l.end != int64(len(body)) {
		t.Errorf("layout %+v %v, want [%d, %d)", l, ok, start, len(body))
	}
	if _, ok := layoutOf([]byte("data: {\"result\":1}\n")); ok {
		t.Error("an unterminated result event has a layout")
	}
}
