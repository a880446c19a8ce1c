package doccheck

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Released says which versions of the plugin exist: the repository's git
// tags. A release is published (its image, its files, its release page)
// only by the workflow a pushed v* tag runs.
type Released struct {
	Tags []string
}

var (
	// claimRE finds a reference to a published artefact of a version of
	// the plugin: the image tag (…/mcp-resume-guard:v0.2.0), a release file
	// (mcp-resume-guard-v0.2.0.wasm), the release page (releases/tag/v0.2.0)
	// or the module at a version (…/mcp-resume-guard/cmd/validate@v0.2.0).
	// Group 1 is the version. Placeholders (vX.Y.Z, <tag>) are no claim.
	claimRE = regexp.MustCompile(`(?:mcp-resume-guard[:-]|releases/tag/|mcp-resume-guard(?:/[A-Za-z0-9_.\-]+)*@)(v[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.\-]+)?)\b`)
	// startLineRE finds a sample of the line the plugin logs at start,
	// "mcp-resume-guard dev (<commit>) started": group 1 is the version.
	startLineRE = regexp.MustCompile(`mcp-resume-guard ([^\s()]+) \([^)\s]*\) started`)
)

// unpublished is what a paragraph says to name a release that is defined
// but has no tag yet.
const unpublished = "not yet published"

// CheckVersions reports every version a Markdown file under root names
// that does not exist. A sample of the start line must show a version a
// build of this repository stamps: dev (make build without a tag, the
// filter's default) or a tag. A reference to a published image, release
// file, release page or module version must name a tag, unless it is in a
// paragraph (not a code block: a command there is copied and run) that
// says the release is "not yet published". CHANGELOG.md, the history of
// versions, is not read.
func CheckVersions(root string, rel Released) ([]Problem, error) {
	var out []Problem
	err := walkMarkdown(root, func(name, text string) {
		if name != "CHANGELOG.md" {
			out = append(out, checkVersions(name, text, rel)...)
		}
	})
	return out, err
}

func checkVersions(file, text string, rel Released) []Problem {
	var out []Problem
	tags := "none"
	if len(rel.Tags) > 0 {
		tags = strings.Join(rel.Tags, ", ")
	}
	for _, b := range blocks(text) {
		marked := !b.code && strings.Contains(strings.ToLower(strings.Join(b.lines, " ")), unpublished)
		for i, line := range b.lines {
			n := b.first + i
			for _, m := range startLineRE.FindAllStringSubmatch(line, -1) {
				if v := m[1]; v != "dev" && !slices.Contains(rel.Tags, v) {
					out = append(out, Problem{file, n, fmt.Sprintf("a sample start line shows version %s, which no build of this repository stamps: make build stamps git describe, dev without a tag (tags: %s)", v, tags)})
				}
			}
			for _, m := range claimRE.FindAllStringSubmatch(line, -1) {
				v := m[1]
				switch {
				case slices.Contains(rel.Tags, v):
				case b.code:
					out = append(out, Problem{file, n, fmt.Sprintf("a code block uses %s, but %s has no tag, so nothing of it is published (tags: %s)", m[0], v, tags)})
				case !marked:
					out = append(out, Problem{file, n, fmt.Sprintf("names %s as if published, but %s has no tag (tags: %s); say so in the paragraph (%q) or name what exists", m[0], v, tags, unpublished)})
				}
			}
		}
	}
	return out
}

// block is a paragraph (lines up to a blank line) or a fenced code block.
type block struct {
	first int // line number of the first line
	lines []string
	code  bool
}

// blocks splits Markdown text into paragraphs and fenced code blocks.
func blocks(text string) []block {
	var out []block
	var cur *block
	inFence, fence := false, ""
	flush := func() {
		if cur != nil && len(cur.lines) > 0 {
			out = append(out, *cur)
		}
		cur = nil
	}
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case !inFence:
				flush()
				inFence, fence = true, m[1][:1]
				cur = &block{first: n + 1, code: true}
				continue
			case strings.HasPrefix(strings.TrimSpace(line), strings.Repeat(fence, 3)):
				inFence = false
				flush()
				continue
			}
		}
		if !inFence && strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if cur == nil {
			cur = &block{first: n}
		}
		cur.lines = append(cur.lines, line)
	}
	flush()
	return out
}
