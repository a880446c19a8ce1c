package doccheck

import (
	"os/exec"
	"strings"
	"testing"
)

// gitTags returns the repository's tags, the versions that exist.
func gitTags(t *testing.T) []string {
	t.Helper()
	if err := exec.Command("git", "-C", "../..", "rev-parse", "--git-dir").Run(); err != nil {
		t.Skipf("not a git work tree (%v): the tags that exist are unknown", err)
	}
	out, err := exec.Command("git", "-C", "../..", "tag", "--list").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(out))
}

// TestRepositoryVersions: no Markdown file claims a published image, release
// file, release page or module version without its tag, and every sample of
// the start line shows a version a build stamps (dev without a tag).
func TestRepositoryVersions(t *testing.T) {
	problems, err := CheckVersions("../..", Released{Tags: gitTags(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestFindsUnpublishedVersions: in a file of its own, each kind of claim of
// a version without a tag is reported on its line; a tagged version, a
// placeholder, a paragraph that says the release is not yet published and
// another project's version are not.
func TestFindsUnpublishedVersions(t *testing.T) {
	text := strings.Join([]string{
		"Releases publish `ghcr.io/mcp-resume-guard/mcp-resume-guard:v0.2.0`.", // 1
		"",                                  // 2
		"Release v0.2.0 is defined but not", // 3
		"yet published: once tagged, `ghcr.io/mcp-resume-guard/mcp-resume-guard:v0.2.0`", // 4
		"exists, and `mcp-resume-guard-v0.2.0.wasm` beside it.",                          // 5
		"",      // 6
		"```sh", // 7
		"crane digest ghcr.io/mcp-resume-guard/mcp-resume-guard:v0.2.0 # not yet published", // 8
		"go run github.com/mcp-resume-guard/mcp-resume-guard/cmd/validate@v0.2.0 deploy/",   // 9
		"```", // 10
		"The plugin logs `mcp-resume-guard v0.1.0 (<commit>) started, …`; a dev build `mcp-resume-guard dev (<commit>) started`.", // 11
		"[release](https://github.com/o/r/releases/tag/v0.3.0) and `mcp-resume-guard:v0.1.0` (tagged)",                            // 12
		"`mcp-resume-guard:vX.Y.Z`, `mcp-resume-guard-<tag>.wasm`, github.com/modelcontextprotocol/go-sdk@v1.8.0",                 // 13
		"pinned `oci://ghcr.io/mcp-resume-guard/mcp-resume-guard@sha256:abc`",                                                     // 14
		"started: `mcp-resume-guard v0.1.0-3-gabc1234 (0123abc) started, routes: …`",                                              // 15
	}, "\n")
	got := map[int]string{}
	for _, p := range checkVersions("x.md", text, Released{Tags: []string{"v0.1.0"}}) {
		got[p.Line] += p.Msg
	}
	wantProblems(t, got, map[int]string{
		1:  "names mcp-resume-guard:v0.2.0 as if published, but v0.2.0 has no tag (tags: v0.1.0)",
		8:  "a code block uses mcp-resume-guard:v0.2.0, but v0.2.0 has no tag",
		9:  "a code block uses mcp-resume-guard/mcp-resume-guard/cmd/validate@v0.2.0",
		12: "releases/tag/v0.3.0 as if published",
		15: "a sample start line shows version v0.1.0-3-gabc1234",
	})
	if p := checkVersions("x.md", "`mcp-resume-guard v0.1.0 (<commit>) started`", Released{}); len(p) != 1 || !strings.Contains(p[0].Msg, "(tags: none)") {
		t.Errorf("without tags, a v0.1.0 start line: %v", p)
	}
}
