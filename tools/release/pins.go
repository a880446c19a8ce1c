package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// pinPattern finds the places that name a released version of the plugin:
// the image tag (mcp-resume-guard:v0.1.0), the release files
// (mcp-resume-guard-v0.1.0.wasm), the release page (releases/tag/v0.1.0),
// go run …/cmd/validate@v0.1.0 and make release VERSION=v0.1.0. Group 1
// is the version. (An illustration of the plugin's start line,
// "mcp-resume-guard v0.1.0 (<commit>) started", is no pin.)
var pinPattern = regexp.MustCompile(`(?:mcp-resume-guard[:-]|releases/tag/|/cmd/validate@|VERSION=)` +
	`(v[0-9]+\.[0-9]+\.[0-9]+(?:-(?:alpha|beta|rc)(?:\.[0-9]+)*)?)\b`)

// notPinned are the files whose versions are history or fixtures, not
// pins: the changelog itself, the module files, this tool and the docs'
// checker (their tests make up versions).
func notPinned(name string) bool {
	return name == "CHANGELOG.md" || filepath.Base(name) == "go.mod" || filepath.Base(name) == "go.sum" ||
		strings.HasPrefix(name, "tools/release/") || strings.HasPrefix(name, "tools/doccheck/")
}

// Pin is one place that names a version.
type Pin struct {
	File    string // relative to the repository
	Line    int    // 1-based
	Version string // with its v
	Text    string // the match
}

func (p Pin) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Text) }

// Pins returns every place in the files git tracks under repo that names
// a version of the plugin (pinPattern), but for notPinned files.
func Pins(repo string) ([]Pin, error) {
	out, err := exec.Command("git", "-C", repo, "ls-files", "-z").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w", repo, err)
	}
	var pins []Pin
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" || notPinned(name) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(repo, name))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the working tree; the clean-tree check says so
			}
			return nil, err
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range pinPattern.FindAllStringSubmatch(line, -1) {
				pins = append(pins, Pin{File: name, Line: i + 1, Version: m[1], Text: m[0]})
			}
		}
	}
	return pins, nil
}

// checkPins returns an error listing the pins that do not name want,
// which is what (the latest release, the version being released).
func checkPins(pins []Pin, want, what string) error {
	var wrong []string
	for _, p := range pins {
		if p.Version != want {
			wrong = append(wrong, "  "+p.String())
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d places pin another version than %s, %s; the release commit moves them:\n%s",
		len(wrong), len(pins), want, what, strings.Join(wrong, "\n"))
}

// MovePins rewrites every pin under repo that names another version to
// version (what a release commit does besides the CHANGELOG.md heading)
// and returns the pins it moved.
func MovePins(repo, version string) ([]Pin, error) {
	pins, err := Pins(repo)
	if err != nil {
		return nil, err
	}
	var moved []Pin
	byFile := map[string][]Pin{}
	for _, p := range pins {
		if p.Version != version {
			byFile[p.File] = append(byFile[p.File], p)
			moved = append(moved, p)
		}
	}
	for file, ps := range byFile {
		name := filepath.Join(repo, file)
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		lines := strings.Split(string(b), "\n")
		for _, p := range ps {
			lines[p.Line-1] = strings.ReplaceAll(lines[p.Line-1], p.Text, strings.Replace(p.Text, p.Version, version, 1))
		}
		info, err := os.Stat(name)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(name, []byte(strings.Join(lines, "\n")), info.Mode().Perm()); err != nil {
			return nil, err
		}
	}
	return moved, nil
}
