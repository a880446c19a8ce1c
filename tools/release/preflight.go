package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Preflight is what make release checks before it builds anything.
type Preflight struct {
	Version string // vX.Y.Z or vX.Y.Z-PRERELEASE
	Notes   string // CHANGELOG.md's section of the version
	Commit  string // HEAD of the repository
	Pins    []Pin  // the places that pin a version
}

// preflight refuses a release of version from the repository at repo
// whose CHANGELOG.md (changelog) has no section of its own for it, still
// has entries under [Unreleased], whose tree git calls dirty, whose tag of
// that name names another commit than HEAD, or, for a release that is not
// a pre-release, whose manifests and docs pin another version. Every
// problem is reported at once.
func preflight(repo, changelog, version string) (*Preflight, error) {
	if err := checkVersion(version); err != nil {
		return nil, err
	}
	cl, err := os.ReadFile(changelog)
	if err != nil {
		return nil, err
	}
	var problems []error
	p := &Preflight{Version: version}
	if p.Notes, err = Section(string(cl), strings.TrimPrefix(version, "v")); err != nil {
		problems = append(problems, fmt.Errorf("%s: %w: the release commit renames [Unreleased] to \"## [%s] - YYYY-MM-DD\"",
			changelog, err, strings.TrimPrefix(version, "v")))
	}
	if entries := unreleasedEntries(string(cl)); len(entries) > 0 {
		problems = append(problems, fmt.Errorf("%s: [Unreleased] still has %d entries (the first: %q): move them under the release's section first",
			changelog, len(entries), strings.TrimSpace(entries[0])))
	}
	status, err := git(repo, "status", "--porcelain")
	if err != nil {
		return nil, err
	}
	if status != "" {
		lines := strings.Split(status, "\n")
		problems = append(problems, fmt.Errorf("the tree is dirty (git status: %d changes, the first: %q): commit or stash them; a release is built from a commit",
			len(lines), strings.TrimSpace(lines[0])))
	}
	if p.Commit, err = git(repo, "rev-parse", "HEAD"); err != nil {
		return nil, err
	}
	if tagged, err := git(repo, "rev-parse", "-q", "--verify", "refs/tags/"+version+"^{commit}"); err == nil && tagged != p.Commit {
		problems = append(problems, fmt.Errorf("tag %s is commit %s, not HEAD %s: release the tagged commit", version, tagged, p.Commit))
	}
	if p.Pins, err = Pins(repo); err != nil {
		return nil, err
	}
	if !isPrerelease(version) {
		if err := checkPins(p.Pins, version, "the version being released"); err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("refusing to release %s:\n- %w", version, joinLines(problems))
	}
	return p, nil
}

// joinLines joins errors as a list, one "- " item each.
func joinLines(errs []error) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New(strings.Join(msgs, "\n- "))
}

// git runs git in repo and returns its trimmed output.
func git(repo string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
