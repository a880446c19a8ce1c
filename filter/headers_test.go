package main

import (
	"net/url"
	"testing"
)

// TestQueryUnescape holds queryUnescape to url.QueryUnescape, which the
// plugin does not import.
func TestQueryUnescape(t *testing.T) {
	for _, s := range []string{"", "abc", "a+b", "a%20b", "%41%62", "%e2%82%AC", "%", "%4", "%4g", "a%zz", "100%", "%%41", "+%2B+"} {
		want, werr := url.QueryUnescape(s)
		got, ok := queryUnescape(s)
		if ok != (werr == nil) || (ok && got != want) {
			t.Errorf("queryUnescape(%q) = %q, %v; url.QueryUnescape: %q, %v", s, got, ok, want, werr)
		}
	}
}
