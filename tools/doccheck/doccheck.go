// Package doccheck checks the repository's Markdown files: every relative
// link and #anchor must resolve (anchors as GitHub derives them from
// headings), nothing may cite a file outside the repository (a path that
// climbs out of it with ../, an absolute file path), and every reason name
// and counter name they mention must be one the code gives (CheckNames).
package doccheck

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Problem is one broken reference.
type Problem struct {
	File string // slash-separated, relative to the root
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// skipDirs are never searched for Markdown files.
var skipDirs = map[string]bool{".git": true, "build": true, "node_modules": true, "testdata": true}

// walkMarkdown calls fn with the slash path relative to root and the text
// of every Markdown file under root, skipping skipDirs.
func walkMarkdown(root string, fn func(rel, text string)) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.EqualFold(filepath.Ext(p), ".md") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fn(filepath.ToSlash(rel), string(b))
		return nil
	})
}

// Check checks every Markdown file under root.
func Check(root string) ([]Problem, error) {
	docs := map[string]*doc{} // by slash path relative to root
	err := walkMarkdown(root, func(rel, text string) {
		docs[rel] = parse(text)
	})
	if err != nil {
		return nil, err
	}
	var out []Problem
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		d := docs[name]
		for _, l := range d.links {
			if msg := resolve(root, name, l.target, docs); msg != "" {
				out = append(out, Problem{name, l.line, msg})
			}
		}
		for _, c := range d.citations {
			out = append(out, Problem{name, c.line, c.target})
		}
		for _, m := range d.mentions {
			near := path.Join(path.Dir(name), m.target)
			if docs[near] == nil && docs[path.Clean(m.target)] == nil {
				out = append(out, Problem{name, m.line, fmt.Sprintf("mentions %s, which is not a Markdown file of the repository (next to %s or from its root)", m.target, name)})
			}
		}
	}
	return out, nil
}

type ref struct {
	line   int
	target string
}

// doc is what Check reads of one Markdown file.
type doc struct {
	anchors   map[string]bool
	links     []ref
	citations []ref // references to files outside the repository, as messages
	mentions  []ref // Markdown file names in the text
}

var (
	headingRE  = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$`)
	inlineRE   = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`)
	refDefRE   = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	htmlIDRE   = regexp.MustCompile(`<a\s+(?:[^>]*\s)?(?:id|name)="([^"]+)"`)
	hrefRE     = regexp.MustCompile(`<a\s+(?:[^>]*\s)?href="([^"]+)"`)
	codeSpanRE = regexp.MustCompile("`+[^`]*`+")
	// climbRE finds paths that climb with ../ (to be resolved against the
	// file's directory); absRE absolute paths of a machine's file system.
	climbRE = regexp.MustCompile(`(?:^|[\s(\x60'"])((?:\.\./)+[A-Za-z0-9_.\-][A-Za-z0-9_./\-]*)`)
	absRE   = regexp.MustCompile(`(?:^|[\s(\x60'"])((?:/work|/home|/root|/Users|/tmp)/[A-Za-z0-9_.\-]+[A-Za-z0-9_./\-]*)|file://\S+`)
	fenceRE = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	// mdNameRE finds Markdown file names mentioned in the text ("see
	// DESIGN.md §4"): each must exist, next to the file or from the root.
	mdNameRE = regexp.MustCompile(`(?:^|[\s(\x60'"])([A-Za-z0-9_\-][A-Za-z0-9_./\-]*\.md)\b`)
)

func parse(text string) *doc {
	d := &doc{anchors: map[string]bool{}}
	slugs := map[string]int{}
	inFence, fence := false, ""
	inComment := false
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case !inFence:
				inFence, fence = true, m[1][:1]
			case strings.HasPrefix(strings.TrimSpace(line), strings.Repeat(fence, 3)):
				inFence = false
			}
			continue
		}
		// Citations count in code too: a path in a code block is still a
		// reference a reader follows.
		d.cite(line, n)
		if inFence {
			continue
		}
		if inComment || strings.Contains(line, "<!--") {
			before, after, _ := strings.Cut(line, "<!--")
			if inComment {
				before = ""
				after = line
			}
			if _, rest, closed := strings.Cut(after, "-->"); closed {
				inComment = false
				line = before + rest
			} else {
				inComment = true
				line = before
			}
		}
		for _, m := range mdNameRE.FindAllStringSubmatch(line, -1) {
			if !strings.HasPrefix(m[1], "../") {
				d.mentions = append(d.mentions, ref{n, m[1]})
			}
		}
		for _, m := range htmlIDRE.FindAllStringSubmatch(line, -1) {
			d.anchors[m[1]] = true
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			s := Slug(m[2])
			if k := slugs[s]; k > 0 {
				d.anchors[s+"-"+strconv.Itoa(k)] = true
			} else {
				d.anchors[s] = true
			}
			slugs[s]++
		}
		if m := refDefRE.FindStringSubmatch(line); m != nil {
			d.links = append(d.links, ref{n, m[1]})
			continue
		}
		noCode := codeSpanRE.ReplaceAllString(line, "")
		for _, m := range inlineRE.FindAllStringSubmatch(noCode, -1) {
			d.links = append(d.links, ref{n, m[2]})
		}
		for _, m := range hrefRE.FindAllStringSubmatch(noCode, -1) {
			d.links = append(d.links, ref{n, m[1]})
		}
	}
	return d
}

func (d *doc) cite(line string, n int) {
	for _, m := range absRE.FindAllStringSubmatch(line, -1) {
		p := m[1]
		if p == "" {
			p = strings.TrimSpace(m[0])
		}
		d.citations = append(d.citations, ref{n, fmt.Sprintf("cites %s, a file outside the repository", strings.TrimRight(p, ".,;:)"))})
	}
	for _, m := range climbRE.FindAllStringSubmatch(line, -1) {
		d.links = append(d.links, ref{n, "climb:" + strings.TrimRight(m[1], ".,;:)")})
	}
}

// resolve returns why a link target from file name does not resolve, or "".
func resolve(root, name, target string, docs map[string]*doc) string {
	climb := strings.HasPrefix(target, "climb:")
	target = strings.TrimPrefix(target, "climb:")
	if target == "" {
		return "an empty link"
	}
	if u, err := url.Parse(target); err == nil && u.Scheme != "" {
		return "" // http(s), mailto: not checked here
	}
	file, anchor, _ := strings.Cut(target, "#")
	if unescaped, err := url.PathUnescape(file); err == nil {
		file = unescaped
	}
	if strings.HasPrefix(file, "/") {
		return fmt.Sprintf("links to %s: an absolute path, which resolves nowhere (or outside the repository)", target)
	}
	dest := name
	if file != "" {
		dest = path.Clean(path.Join(path.Dir(name), file))
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return fmt.Sprintf("cites %s, a file outside the repository", target)
		}
		if climb {
			return "" // a path in the text that stays inside: not necessarily a file
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
			return fmt.Sprintf("links to %s, which does not exist", target)
		}
	}
	if anchor == "" {
		return ""
	}
	d, ok := docs[dest]
	if !ok {
		return "" // an anchor into a file that is not Markdown (a line number, ...)
	}
	if !d.anchors[anchor] {
		return fmt.Sprintf("links to %s: %s has no heading with the anchor #%s", target, dest, anchor)
	}
	return ""
}

var (
	mdLinkRE = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlRE   = regexp.MustCompile(`<[^>]+>`)
)

// Slug returns the anchor GitHub gives a heading: its text as rendered,
// lower-cased, without punctuation other than '-' and '_', spaces turned
// into '-'.
func Slug(heading string) string {
	s := mdLinkRE.ReplaceAllString(heading, "$1")
	s = htmlRE.ReplaceAllString(s, "")
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
