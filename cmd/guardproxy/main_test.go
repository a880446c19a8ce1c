package main

import "testing"

func TestParseCuts(t *testing.T) {
	got, err := parseCuts("/sse=5, /mcp=1")
	if err != nil || got["/sse"] != 5 || got["/mcp"] != 1 || len(got) != 2 {
		t.Fatalf("parseCuts = %v, %v", got, err)
	}
	for _, bad := range []string{"sse=5", "/sse=0", "/sse", "/sse=x"} {
		if _, err := parseCuts(bad); err == nil {
			t.Errorf("parseCuts(%q) accepted", bad)
		}
	}
}
