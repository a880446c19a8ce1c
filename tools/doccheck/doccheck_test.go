package doccheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/counters"
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/trial"
)

// TestRepository: every Markdown file of the repository links only to
// files and headings that exist, and cites nothing outside it.
func TestRepository(t *testing.T) {
	problems, err := Check("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// codeNames returns the reason and counter names the code defines.
func codeNames(t *testing.T) Names {
	t.Helper()
	var n Names
	for r := cursor.Reason(0); r.String() != "invalid"; r++ {
		n.Reasons = append(n.Reasons, r.String())
	}
	// The refusals of ambiguous requests carry their own reasons, and the
	// trial proxy names a dropped legacy cursor.
	for a := cursor.DuplicateLastEventID; a.Body() != nil; a++ {
		if r := cursor.ReinitReason(a.Body()); !slices.Contains(n.Reasons, r) {
			n.Reasons = append(n.Reasons, r)
		}
	}
	if !slices.Contains(n.Reasons, "duplicate_parameter") {
		t.Fatal("the refusals of ambiguous requests name no reason: update codeNames")
	}
	n.Reasons = append(n.Reasons, trial.ReasonCursorDropped)
	for _, c := range counters.Names() {
		n.Counters = append(n.Counters, counters.Prefix+c)
	}
	return n
}

// TestRepositoryNames: every reason name and counter name the Markdown
// files mention is one the code gives.
func TestRepositoryNames(t *testing.T) {
	problems, err := CheckNames("../..", codeNames(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestFindsUnknownNames: in a file of its own, each kind of unknown name is
// reported on its line, and the known ones are not.
func TestFindsUnknownNames(t *testing.T) {
	names := Names{Reasons: []string{"cross_transport", "untagged_cursor"}, Counters: []string{"mcp_resume_guard_reinit_untagged_total"}}
	text := strings.Join([]string{
		`{"data":{"reason":"cross_transport"}} decision=reinit:cross_transport reason=untagged_cursor`, // 1
		`{"data":{"reason": "untagged"}}`,                                        // 2
		"msg=request decision=reinit:untaged resume=true",                        // 3
		"`mcp_resume_guard_reinit_untagged_total` and reason=…, reinit:<reason>", // 4
		"mcp_resume_guard_reinit_untagged_cursor_total moves",                    // 5
		"| reason | counter |",                                                   // 6
		"|---|---|",                                                              // 7
		"| `untagged_cursor` | `mcp_resume_guard_reinit_untagged_total` |",       // 8
		"| `unknown` | x |",                                                      // 9
		"",                                                                       // 10
		"| `unknown` | not a table of reasons |",                                 // 11
	}, "\n")
	got := map[int]string{}
	for _, p := range checkNames("x.md", text, names) {
		got[p.Line] += p.Msg
	}
	wantProblems(t, got, map[int]string{
		2: `quotes reason "untagged"`,
		3: `quotes reason "untaged"`,
		5: "names counter mcp_resume_guard_reinit_untagged_cursor_total",
		9: `a table of reasons names "unknown"`,
	})
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFindsBrokenReferences: in a repository of its own, each kind of broken
// reference is reported on its line, and the good ones are not.
func TestFindsBrokenReferences(t *testing.T) {
	root := t.TempDir()
	write(t, root, "repo/docs/other.md", "see guide.md and README.md\n")
	write(t, root, "repo/docs/guide.md", "# Guide\n\n## Deploy to `Envoy` (1.33+)\n\n## Deploy to `Envoy` (1.33+)\n\n<a id=\"custom\"></a>\n")
	write(t, root, "repo/main.go", "package main\n")
	write(t, root, "outside.md", "# Outside\n")
	write(t, root, "repo/README.md", strings.Join([]string{
		"# Title",                                   // 1
		"[ok](docs/guide.md) [ok](main.go)",         // 2
		"[ok](docs/guide.md#deploy-to-envoy-133)",   // 3
		"[ok](docs/guide.md#deploy-to-envoy-133-1)", // 4
		"[ok](#title) [ok](docs/guide.md#custom) [web](https://example.com/x#y)", // 5
		"[broken](docs/missing.md)",                      // 6
		"[broken anchor](docs/guide.md#deploy-to-istio)", // 7
		"[broken local anchor](#nowhere)",                // 8
		"[outside](../outside.md)",                       // 9
		"see `../shared/MCP-FACTS.md` for the facts",     // 10
		"[absolute](/etc/passwd)",                        // 11
		"read /work/shared/notes.md first",               // 12
		"```",                                            // 13
		"[not a link in code](nowhere.md)",               // 14
		"```",                                            // 15
		"<!-- lead: [a comment](nowhere.md) -->",         // 16
		"[ref]: docs/gone.md",                            // 17
		"`[code span](nowhere.md)` and paths like `/etc/envoy/mcp-resume-guard.wasm` or `/stats/prometheus`", // 18
		"as DESIGN.md §4 says; docs/guide.md and guide.md from docs/ are fine",                               // 19
	}, "\n"))
	problems, err := Check(filepath.Join(root, "repo"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for _, p := range problems {
		if p.File != "README.md" {
			t.Errorf("a problem in %s: %s", p.File, p)
			continue
		}
		got[p.Line] += p.Msg
	}
	wantProblems(t, got, map[int]string{
		6:  "docs/missing.md, which does not exist",
		7:  "docs/guide.md has no heading with the anchor #deploy-to-istio",
		8:  "README.md has no heading with the anchor #nowhere",
		9:  "cites ../outside.md, a file outside the repository",
		10: "cites ../shared/MCP-FACTS.md, a file outside the repository",
		11: "an absolute path",
		12: "cites /work/shared/notes.md, a file outside the repository",
		17: "docs/gone.md, which does not exist",
		18: "mentions nowhere.md",
		19: "mentions DESIGN.md, which is not a Markdown file of the repository",
	})
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Deploy to Envoy": "deploy-to-envoy",
		"When affinity is impossible: `unknown_cursor: reinit`":         "when-affinity-is-impossible-unknown_cursor-reinit",
		"What was done (before/after, A/B against the build before it)": "what-was-done-beforeafter-ab-against-the-build-before-it",
		"[Linked](x.md) heading":                                        "linked-heading",
		"Envoy ≥ 1.33":                                                  "envoy--133",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestLayout: the README stays a five-minute read whose first screen
// explains itself, in the order a newcomer needs it, and docs/ holds one
// file per reader's task.
func TestLayout(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 15*1024 {
		t.Errorf("README.md is %d bytes; keep it under 15 KB and move details to docs/", len(b))
	}
	// The first screen, before the quick start, explains itself: for whom,
	// the failure and the fix on the wire, the words the rest uses, what it
	// costs and where it has run; the cursor grammar comes later.
	text := string(b)
	first, _, ok := strings.Cut(text, "## Quick start\n")
	if !ok {
		first = ""
	}
	if len(first) > 4096 {
		t.Errorf("README.md's first screen (before ## Quick start) is %d bytes; keep it under 4 KB", len(first))
	}
	for _, want := range []string{
		"**Who needs it**", "migration", "2025", "the cross-transport loss", "(the drain race)",
		"without the guard", "with the guard",
		"*Drain race*", "*Watermark*", "*Tombstone*", "*Principal*", "*Priming event*",
		"**What it costs:**", "(docs/performance.md", "**Where it has run:**",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("README.md's first screen lacks %q", want)
		}
	}
	if strings.Contains(first, `prefix "~1"`) {
		t.Error("README.md's first screen explains the cursor grammar: keep it below the fold (## Tagged event IDs)")
	}
	quick := text[len(first):]
	if i := strings.Index(quick[min(3, len(quick)):], "\n## "); i >= 0 {
		quick = quick[:i+3]
	}
	for _, want := range []string{"make demo", "make test", "the official MCP conformance suite (`make conformance`)"} {
		if !strings.Contains(quick, want) {
			t.Errorf("README.md's quick start lacks %q", want)
		}
	}
	at := 0
	for _, h := range []string{"## Quick start\n", "## Try it on your own server\n", "## Deploy\n", "## Configuration at a glance\n", "## Tagged event IDs\n", "## Documentation\n"} {
		i := strings.Index(string(b[at:]), h)
		if i < 0 {
			t.Errorf("README.md lacks %q after byte %d (the sections' order matters)", strings.TrimSpace(h), at)
			continue
		}
		at += i
	}
	// GitHub shows SECURITY.md as the repository's security policy: how to
	// report, and which versions get fixes.
	if b, err := os.ReadFile("../../SECURITY.md"); err != nil {
		t.Errorf("SECURITY.md: %v", err)
	} else {
		for _, h := range []string{"## Reporting a vulnerability\n", "## Supported versions\n", "/security/advisories/new"} {
			if !strings.Contains(string(b), h) {
				t.Errorf("SECURITY.md lacks %q", strings.TrimSpace(h))
			}
		}
	}
	for _, f := range []string{"deploy-envoy", "deploy-istio", "deploy-envoy-gateway", "scaling-out", "configuration", "operations", "how-it-decides", "security", "performance"} {
		if _, err := os.Stat("../../docs/" + f + ".md"); err != nil {
			t.Errorf("docs/%s.md: %v", f, err)
		}
	}
}

// wantProblems checks that got, the messages reported by line, holds each
// of want's on its line and nothing else.
func wantProblems(t *testing.T, got, want map[int]string) {
	t.Helper()
	for line, w := range want {
		if !strings.Contains(got[line], w) {
			t.Errorf("line %d: %q; want %q", line, got[line], w)
		}
		delete(got, line)
	}
	for line, msg := range got {
		t.Errorf("line %d reported wrongly: %s", line, msg)
	}
}
