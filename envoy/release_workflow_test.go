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
// v* tags, refuses what make release refuses before the tests (DRY_RUN=1),
// tests before it builds, builds with make release, pushes the image to
// ghcr.io with the project's pusher, signs the image by digest and the
// files keyless with cosign, attests the build provenance of both and the
// SBOM, and attaches the release files, SBOM and signature bundles.
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
	for _, p := range []string{"contents", "packages", "id-token", "attestations"} {
		if wf.Permissions[p] != "write" {
			fail("permissions.%s is %q; want write (the release, the image, keyless signing, the attestations)", p, wf.Permissions[p])
		}
	}
	job, ok := wf.Jobs["release"]
	if len(wf.Jobs) != 1 || !ok {
		return fmt.Errorf("jobs: want exactly one, release")
	}
	step := func(substr string, not ...string) int {
		for i, s := range job.Steps {
			if strings.Contains(s.Run, substr) && !slices.ContainsFunc(not, func(n string) bool { return strings.Contains(s.Run, n) }) {
				return i
			}
		}
		return -1
	}
	uses := func(action string) []int {
		var at []int
		for i, s := range job.Steps {
			if strings.HasPrefix(s.Uses, action+"@") {
				at = append(at, i)
			}
		}
		return at
	}
	check, test := step("DRY_RUN=1"), step("make test")
	release, push, gh := step("make release VERSION=", "DRY_RUN"), step("go -C tools run ./ocipush"), step("gh release create")
	switch {
	case test < 0:
		fail("no step runs make test")
	case release < 0:
		fail("no step runs make release VERSION=")
	case test > release:
		fail("make release runs before make test")
	}
	if check < 0 || check > test || !strings.Contains(job.Steps[check].Run, "make release VERSION=") {
		fail("no step runs make release VERSION=… DRY_RUN=1 before make test (a tag that cannot be released fails at once)")
	}
	if push < 0 || push < release {
		fail("no step pushes the image with go -C tools run ./ocipush after make release")
	} else {
		s := job.Steps[push].Run
		if !strings.Contains(s, `-ref "$IMAGE:$VERSION"`) || !strings.Contains(s, "-oci.tar") {
			fail("the push step does not push build/release's layout to $IMAGE:$VERSION:\n%s", s)
		}
	}
	if !strings.Contains(string(content), `echo "IMAGE=ghcr.io/$owner/mcp-resume-guard" >> "$GITHUB_ENV"`) {
		fail("IMAGE is not ghcr.io/<owner, lower case>/mcp-resume-guard")
	}
	if sign := step("cosign sign --yes"); sign < 0 || sign < push || len(uses("sigstore/cosign-installer")) == 0 {
		fail("no step after the push installs cosign and signs the image keyless")
	} else {
		s := job.Steps[sign].Run
		if !strings.Contains(s, `cosign sign --yes "$IMAGE@$DIGEST"`) || job.Steps[sign].Env["DIGEST"] != "${{ steps.push.outputs.digest }}" {
			fail("the image is not signed by the digest the push step printed:\n%s", s)
		}
		for _, f := range []string{".wasm\"", "-oci.tar\"", ".cdx.json\"", "cosign sign-blob --yes --bundle"} {
			if !strings.Contains(s, f) {
				fail("the files are not signed keyless into Sigstore bundles: %s is missing", f)
			}
		}
	}
	var files, image bool
	for _, i := range uses("actions/attest-build-provenance") {
		with := job.Steps[i].With
		files = files || strings.Contains(fmt.Sprint(with["subject-path"]), ".wasm")
		image = image || with["subject-digest"] == "${{ steps.push.outputs.digest }}" && with["push-to-registry"] == true
	}
	if !files || !image {
		fail("actions/attest-build-provenance attests the files: %v, the pushed image by digest: %v; want both", files, image)
	}
	if at := uses("actions/attest-sbom"); len(at) != 1 || !strings.HasSuffix(fmt.Sprint(job.Steps[at[0]].With["sbom-path"]), ".cdx.json") {
		fail("no actions/attest-sbom step attests the .cdx.json SBOM")
	}
	if gh < 0 {
		fail("no step creates the GitHub release")
	} else {
		s := job.Steps[gh].Run
		for _, f := range []string{"--notes-file build/release/release-notes.md", ".wasm\"", ".wasm.sha256\"", "-oci.tar\"", ".cdx.json\"", ".sigstore.json"} {
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
		{"no SBOM attached", "\"build/release/mcp-resume-guard-$VERSION.cdx.json\" \\\n", "", ".cdx.json"},
		{"no dry run first", `IMAGE="ghcr.io/$owner/mcp-resume-guard" DRY_RUN=1`, `IMAGE="ghcr.io/$owner/mcp-resume-guard"`, "DRY_RUN=1 before make test"},
		{"no id-token", "id-token: write", "id-token: none", "permissions.id-token"},
		{"image signed by tag", `cosign sign --yes "$IMAGE@$DIGEST"`, `cosign sign --yes "$IMAGE:$VERSION"`, "not signed by the digest"},
		{"files unsigned", "cosign sign-blob --yes --bundle", "echo", "Sigstore bundles"},
		{"image provenance not pushed", "push-to-registry: true", "push-to-registry: false", "the pushed image by digest: false"},
		{"SBOM attestation of another file", "sbom-path: build/release/mcp-resume-guard-${{ github.ref_name }}.cdx.json", "sbom-path: build/release/sbom.spdx.json", "attest-sbom"},
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
