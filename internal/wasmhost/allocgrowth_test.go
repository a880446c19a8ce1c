package wasmhost

import (
	"context"
	"testing"
)

// TestAllocGrowthNamesEveryHostCall: the growth counter sees linear memory
// grow inside proxy_on_memory_allocate whichever host call asked for the
// memory — here proxy_get_header_map_pairs in a request-headers callback,
// not a body read — and names that call; an allocator that does not grow
// records nothing.
func TestAllocGrowthNamesEveryHostCall(t *testing.T) {
	imports := []wasmImport{{module: "env", name: "proxy_get_header_map_pairs", params: 3, result: true}}
	growOnePage := []byte{0x41, 0x01, 0x40, 0x00, 0x1a} // i32.const 1; memory.grow 0; drop
	for _, c := range []struct {
		name  string
		alloc []byte
		want  int
	}{
		{"allocator grows memory", growOnePage, 1},
		{"allocator does not", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			funcs := withBody(withBody(emptyFuncs(), "proxy_on_memory_allocate", c.alloc),
				"proxy_on_request_headers", callImport(0, 3, true))
			h, err := New(context.Background(), Options{Wasm: assembleWithImports(imports, funcs), CountAllocGrowth: true})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close(context.Background())
			s, err := h.NewStream(StreamInfo{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.OnRequestHeaders(Headers{{Key: ":path", Value: "/mcp"}, {Key: "cookie", Value: "c"}}, true); err != nil {
				t.Fatal(err)
			}
			gs := h.AllocGrowths()
			if len(gs) != c.want {
				t.Fatalf("growths %+v, want %d", gs, c.want)
			}
			for _, g := range gs {
				if g.Call != "proxy_get_header_map_pairs" || g.Body || g.Bytes != 65536 || g.Size == 0 {
					t.Fatalf("growth %+v, want one page during proxy_get_header_map_pairs outside a body callback", g)
				}
			}
		})
	}
}
