package envoy_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// releaseWorkflowFile publishes a release on a version tag.
const releaseWorkflowFile = ".github/workflows/release.yml"

// checkReleaseWorkflow lints the release workflow and checks that it runs on
// v* tags, tests before it builds, builds with make release, pushes the
// image to ghcr.io with the project's pusher and attaches the release
// files.
func checkReleaseWorkflow(content []byte) error {
	if err := lintWorkflow(content); err != nil {
		return err
	}
	var wf struct {
		On struct {
			Push struct {
				Tags     []string `yaml:"tags"`
				Branches []string `yaml:"branches"`
			} `yaml:"push"`
		} `yaml:"on"`
		Permissions map[string]string      `yaml:"permissions"`
		Jobs        map[string]workflowJob `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(content, &wf); err != nil {
		return err
	}
	var problems []error
	fail := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	if !slices.Equal(wf.On.Push.Tags, []string{"v*"}) || len(wf.On.Push.Branches) > 0 {
		fail("on.push: tags %v, branches %v; want only tags [v*]", wf.On.Push.Tags, wf.On.Push.Branches)
	}
	for _, p := range []string{"contents", "packages"} {
		if wf.Permissions[p] != "write" {
			fail("permissions.%s is %q; want write (the release, the image)", p, wf.Permissions[p])
		}
	}
	job, ok := wf.Jobs["release"]
	if len(wf.Jobs) != 1 || !ok {
		return fmt.Errorf("jobs: want exactly one, release")
	}
	step := func(substr string) int {
		for i, s := range job.Steps {
			if strings.Contains(s.Run, substr) {
				return i
			}
		}
		return -1
	}
	test, release, push, gh := step("make test"), step("make release VERSION="), step("go run ./internal/tools/ocipush"), step("gh release create")
	switch {
	case test < 0:
		fail("no step runs make test")
	case release < 0:
		fail("no step runs make release VERSION=")
	case test > release:
		fail("make release runs before make test")
	}
	if push < 0 || push < release {
		fail("no step pushes the image with go run ./internal/tools/ocipush after make release")
	} else {
		s := job.Steps[push].Run
		if !strings.Contains(s, `-ref "$IMAGE:$VERSION"`) || !strings.Contains(s, "-oci.tar") {
			fail("the push step does not push build/release's layout to $IMAGE:$VERSION:\n%s", s)
		}
	}
	if !strings.Contains(string(content), `echo "IMAGE=ghcr.io/$owner/mcp-resume-guard" >> "$GITHUB_ENV"`) {
		fail("IMAGE is not ghcr.io/<owner, lower case>/mcp-resume-guard")
	}
	if gh < 0 {
		fail("no step creates the GitHub release")
	} else {
		s := job.Steps[gh].Run
		for _, f := range []string{"--notes-file build/release/release-notes.md", ".wasm\"", ".wasm.sha256\"", "-oci.tar\""} {
			if !strings.Contains(s, f) {
				fail("gh release create does not attach or use %s", f)
			}
		}
	}
	return errors.Join(problems...)
}

func TestReleaseWorkflow(t *testing.T) {
	if testing.Short() {
		t.Skip("installs actionlint")
	}
	good := string(readFile(t, filepath.Join(repoRoot, releaseWorkflowFile)))
	if err := checkReleaseWorkflow([]byte(good)); err != nil {
		t.Fatalf("%s: %v", releaseWorkflowFile, err)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"a misspelt context", "${{ github.ref_name }}", "${{ github.ref_nam }}", "actionlint"},
		{"runs on branches", `tags: ["v*"]`, `branches: [main]`, "want only tags [v*]"},
		{"no tests", "run: make test\n", "run: make build\n", "no step runs make test"},
		{"no packages permission", "packages: write", "packages: read", "permissions.packages"},
		{"pushes elsewhere", `-ref "$IMAGE:$VERSION"`, `-ref "docker.io/x:$VERSION"`, "does not push"},
		{"no checksum attached", "\"build/release/mcp-resume-guard-$VERSION.wasm.sha256\" \\\n", "", ".wasm.sha256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("%s no longer contains %q; update this variant", releaseWorkflowFile, tc.old)
			}
			err := checkReleaseWorkflow([]byte(strings.Replace(good, tc.old, tc.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want an error containing %q", err, tc.want)
			}
		})
	}
}
