package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// semverTag is a release version as the tags and the image carry it:
// v and a Semantic Versioning 2.0.0 version with an optional pre-release
// (v0.2.0, v0.2.0-rc.1), without build metadata, which an OCI tag cannot
// hold ("+").
var semverTag = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
	`(-((0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?$`)

// checkVersion refuses what is not vMAJOR.MINOR.PATCH[-PRERELEASE].
func checkVersion(version string) error {
	if !semverTag.MatchString(version) {
		return fmt.Errorf("version %q: want vX.Y.Z or a pre-release vX.Y.Z-rc.N (Semantic Versioning, no build metadata)", version)
	}
	return nil
}

// isPrerelease reports whether a version (with or without its v) has a
// pre-release part.
func isPrerelease(version string) bool {
	return strings.Contains(version, "-")
}

// heading is a Keep a Changelog section heading, "## [0.1.0] - 2026-12-01"
// or "## [Unreleased]"; group 1 is what stands in the brackets.
var heading = regexp.MustCompile(`^## \[([^\]]+)\]( - .*)?$`)

// Section returns the body of a Keep a Changelog section "## [version]"
// (with or without a date after it), up to the next "## " heading or the
// link definitions at the end, trimmed. An empty section is an error: a
// release says what it holds.
func Section(changelog, version string) (string, error) {
	lines := strings.Split(changelog, "\n")
	start := -1
	for i, l := range lines {
		if m := heading.FindStringSubmatch(l); m != nil && m[1] == version {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return "", fmt.Errorf("no section \"## [%s]\"", version)
	}
	end := len(lines)
	for i := start; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "## ") || strings.HasPrefix(lines[i], "[") && strings.Contains(lines[i], "]: ") {
			end = i
			break
		}
	}
	body := strings.TrimSpace(strings.Join(lines[start:end], "\n"))
	if body == "" {
		return "", errors.New("section \"## [" + version + "]\" is empty")
	}
	return body, nil
}

// Released returns the versions CHANGELOG.md has a section for, newest
// first as the file orders them, without [Unreleased].
func Released(changelog string) []string {
	var versions []string
	for _, l := range strings.Split(changelog, "\n") {
		if m := heading.FindStringSubmatch(l); m != nil && m[1] != "Unreleased" {
			versions = append(versions, m[1])
		}
	}
	return versions
}

// LatestRelease returns the newest version of CHANGELOG.md that is not a
// pre-release, with its v: the version the manifests and the docs pin.
func LatestRelease(changelog string) (string, error) {
	for _, v := range Released(changelog) {
		if !isPrerelease(v) {
			if err := checkVersion("v" + v); err != nil {
				return "", fmt.Errorf("CHANGELOG.md: section \"## [%s]\": %w", v, err)
			}
			return "v" + v, nil
		}
	}
	return "", errors.New("CHANGELOG.md has no released version: no section \"## [X.Y.Z] - DATE\"")
}

// unreleasedEntries returns the lines of the [Unreleased] section that are
// entries: every non-blank line but the "### Added"-style group headings,
// which a release commit may leave behind.
func unreleasedEntries(changelog string) []string {
	body, err := Section(changelog, "Unreleased")
	if err != nil {
		return nil // absent or empty: nothing is left unreleased
	}
	var entries []string
	for _, l := range strings.Split(body, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "### ") {
			entries = append(entries, l)
		}
	}
	return entries
}
