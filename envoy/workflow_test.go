package envoy_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"
)

// workflowFile is the hosted CI workflow that runs docker-compose.yaml's e2e
// suite over a matrix of Envoy releases.
const workflowFile = ".github/workflows/e2e-envoy.yml"

const (
	// actionlintModule is the workflow linter, run as a command: as a
	// library it needs an older go.yaml.in/yaml/v4 than compose-go.
	actionlintModule = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"
	// composeUp is the command that runs the e2e suite against Envoy and
	// exits with the suite's result.
	composeUp = "docker compose up --build --exit-code-from e2e"
	// artifactsDir is where the compose e2e runner saves Envoy's
	// /stats/prometheus and where the workflow collects Envoy's log.
	artifactsDir = "build/e2e-artifacts"
	// matrixImage is how the job names the Envoy image of a matrix entry.
	matrixImage = "envoyproxy/envoy:${{ matrix.envoy }}"
	// fixedEnvoyMinor is the first Envoy release whose Wasm host answers
	// poll_oneoff and allows it during _initialize (docs/deploy-envoy.md, "Requirements").
	fixedEnvoyMinor = 39
)

// workflow is the part of a GitHub Actions workflow the project checks.
type workflow struct {
	On   map[string]any         `yaml:"on"`
	Jobs map[string]workflowJob `yaml:"jobs"`
}

type workflowJob struct {
	RunsOn   any `yaml:"runs-on"`
	Strategy struct {
		Matrix map[string]any `yaml:"matrix"`
	} `yaml:"strategy"`
	Env   map[string]string `yaml:"env"`
	Steps []workflowStep    `yaml:"steps"`
}

type workflowStep struct {
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]any    `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

var actionlintBin = sync.OnceValues(func() (string, error) {
	// Installed under the git-ignored build/, where a later run finds it.
	bin, err := filepath.Abs(filepath.Join(repoRoot, "build", "tools"))
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "install", actionlintModule)
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s: %w\n%s", actionlintModule, err, out)
	}
	return filepath.Join(bin, "actionlint"), nil
})

// lintWorkflow runs actionlint (syntax, expressions, runner labels, the
// inputs of well-known actions) on a workflow file's content. shellcheck and
// pyflakes are not run, so the result does not depend on what is installed.
func lintWorkflow(content []byte) error {
	bin, err := actionlintBin()
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "-no-color", "-oneline", "-shellcheck=", "-pyflakes=", "-stdin-filename", workflowFile, "-")
	cmd.Dir = repoRoot
	cmd.Stdin = bytes.NewReader(content)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit) && exit.ExitCode() == 1: // problems found
		return fmt.Errorf("actionlint:\n%s", strings.TrimSpace(stdout.String()))
	default:
		return fmt.Errorf("actionlint: %w\n%s%s", err, stdout.Bytes(), stderr.Bytes())
	}
}

// parseWorkflow decodes a workflow file and returns its only job, e2e.
func parseWorkflow(content []byte) (*workflow, workflowJob, error) {
	var wf workflow
	if err := yaml.Unmarshal(content, &wf); err != nil {
		return nil, workflowJob{}, fmt.Errorf("%s: %w", workflowFile, err)
	}
	job, ok := wf.Jobs["e2e"]
	if len(wf.Jobs) != 1 || !ok {
		return nil, workflowJob{}, fmt.Errorf("jobs %v; want exactly one, e2e", slices.Sorted(maps.Keys(wf.Jobs)))
	}
	return &wf, job, nil
}

// workflowEnvoyImages returns the Envoy images the workflow's matrix runs
// the compose e2e suite with, in matrix order.
func workflowEnvoyImages(content []byte) ([]string, error) {
	_, job, err := parseWorkflow(content)
	if err != nil {
		return nil, err
	}
	tags, ok := job.Strategy.Matrix["envoy"].([]any)
	if !ok || len(tags) == 0 {
		return nil, errors.New("job e2e has no strategy.matrix.envoy list (the Envoy image tags to run)")
	}
	if env := job.Env["ENVOY_IMAGE"]; env != matrixImage {
		return nil, fmt.Errorf("job e2e sets ENVOY_IMAGE to %q; want %q, which docker-compose.yaml reads", env, matrixImage)
	}
	var images []string
	for _, tag := range tags {
		images = append(images, strings.Replace(matrixImage, "${{ matrix.envoy }}", fmt.Sprint(tag), 1))
	}
	return images, nil
}

// checkWorkflow lints the workflow and checks that it does what the project
// needs from it: on every push to main and every pull request, build the
// plugin, run the compose e2e suite over Envoy 1.33, a pre-fix release
// (1.36 to 1.38) and a release with the WASI fix (1.39 or later), and upload
// Envoy's log and /stats/prometheus when a job fails. defaultImage is
// docker-compose.yaml's default Envoy image, which the matrix must include;
// goDirective is go.mod's go version, which the workflow's Go must match.
func checkWorkflow(content []byte, defaultImage, goDirective string) error {
	if err := lintWorkflow(content); err != nil {
		return err
	}
	wf, job, err := parseWorkflow(content)
	if err != nil {
		return err
	}
	var problems []error
	fail := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }

	for _, want := range []string{"push", "pull_request"} {
		if _, ok := wf.On[want]; !ok {
			fail("the workflow does not run on %s (it runs on %v)", want, slices.Sorted(maps.Keys(wf.On)))
		}
	}
	if runner, _ := job.RunsOn.(string); !strings.HasPrefix(runner, "ubuntu-") {
		fail("job e2e runs on %v; it needs a GitHub-hosted ubuntu runner, which has Docker and Compose v2", job.RunsOn)
	}

	images, err := workflowEnvoyImages(content)
	if err != nil {
		return err
	}
	var minors []int
	for _, img := range images {
		m := envoyImage.FindStringSubmatch(img)
		if m == nil {
			fail("matrix image %q; want envoyproxy/envoy:v1.MINOR.PATCH (an official image pinned by tag)", img)
			continue
		}
		minor, _ := strconv.Atoi(m[1])
		minors = append(minors, minor)
	}
	if !slices.Contains(minors, minEnvoyMinor) {
		fail("the matrix %v lacks Envoy 1.%d, the oldest release the plugin supports", images, minEnvoyMinor)
	}
	if !slices.ContainsFunc(minors, func(m int) bool { return m > minEnvoyMinor && m < fixedEnvoyMinor }) {
		fail("the matrix %v lacks a later release before the WASI fix (1.34 to 1.%d)", images, fixedEnvoyMinor-1)
	}
	if !slices.ContainsFunc(minors, func(m int) bool { return m >= fixedEnvoyMinor }) {
		fail("the matrix %v lacks a release with the WASI fix (1.%d or later)", images, fixedEnvoyMinor)
	}
	if !slices.Contains(images, defaultImage) {
		fail("the matrix %v lacks docker-compose.yaml's default image %s", images, defaultImage)
	}

	// The steps, in order: check out, set up Go as go.mod says, build the
	// plugin, run the suite; on failure collect Envoy's log and upload it
	// with /stats/prometheus.
	build, up, logs, upload := -1, -1, -1, -1
	for i, s := range job.Steps {
		with := func(key string) string {
			if v, ok := s.With[key]; ok {
				return fmt.Sprint(v)
			}
			return "(unset)"
		}
		onFailure := stepIf(s) == "failure()"
		switch uses := s.Uses; {
		case strings.Contains(s.Run, "make build"):
			build = i
		case strings.Contains(s.Run, composeUp):
			up = i
		case strings.Contains(s.Run, "docker compose logs") && strings.Contains(s.Run, " envoy ") && strings.Contains(s.Run, artifactsDir+"/"):
			if onFailure {
				logs = i
			}
		case strings.HasPrefix(uses, "actions/checkout@"):
			if with("fetch-depth") != "0" {
				fail("actions/checkout fetches depth %s; want 0 (all history): make build stamps git describe into the plugin", with("fetch-depth"))
			}
		case strings.HasPrefix(uses, "actions/setup-go@"):
			if !goVersionMatches(with("go-version"), goDirective) {
				fail("actions/setup-go installs go-version %s; go.mod says go %s", with("go-version"), goDirective)
			}
		case strings.HasPrefix(uses, "actions/upload-artifact@"):
			if strings.TrimSuffix(with("path"), "/") != artifactsDir {
				fail("actions/upload-artifact uploads %s; want %s/ (Envoy's log and /stats/prometheus)", with("path"), artifactsDir)
			} else if onFailure {
				upload = i
			}
		}
	}
	switch {
	case build < 0:
		fail("no step runs make build (docker-compose.yaml mounts build/mcp-resume-guard.wasm)")
	case up < 0:
		fail("no step runs %q", composeUp)
	case build > up:
		fail("the plugin is built after the e2e suite runs")
	}
	switch {
	case logs < 0:
		fail("no step with if: failure() saves docker compose logs envoy under %s/", artifactsDir)
	case upload < 0:
		fail("no actions/upload-artifact step with if: failure() uploads %s/", artifactsDir)
	case logs > upload || logs < up:
		fail("Envoy's log must be saved after the suite runs and before the upload")
	}
	return errors.Join(problems...)
}

// stepIf returns a step's if condition without the optional ${{ }}.
func stepIf(s workflowStep) string {
	c := strings.TrimSpace(s.If)
	if strings.HasPrefix(c, "${{") && strings.HasSuffix(c, "}}") {
		c = strings.TrimSpace(c[3 : len(c)-2])
	}
	return c
}

// goVersionMatches reports whether a setup-go version ("1.26.x") installs
// the release go.mod's go directive ("1.26.0") names.
func goVersionMatches(setup, directive string) bool {
	minor := regexp.MustCompile(`^1\.\d+`).FindString(directive)
	return minor != "" && (setup == minor+".x" || setup == minor || strings.HasPrefix(setup, minor+"."))
}

// goModDirective returns the go version of the root module's go.mod.
func goModDirective(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(readFile(t, filepath.Join(repoRoot, "go.mod")))
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	return string(m[1])
}

// composeDefaultImage is the Envoy image docker-compose.yaml runs when
// ENVOY_IMAGE is not set.
func composeDefaultImage(t *testing.T) string {
	t.Helper()
	p, err := loadCompose(readFile(t, filepath.Join(repoRoot, composeFile)))
	if err != nil {
		t.Fatal(err)
	}
	return p.Services["envoy"].Image
}

func TestWorkflow(t *testing.T) {
	if err := checkWorkflow(readFile(t, filepath.Join(repoRoot, workflowFile)), composeDefaultImage(t), goModDirective(t)); err != nil {
		t.Fatalf("%s: %v", workflowFile, err)
	}
}

func TestWorkflowBrokenVariants(t *testing.T) {
	defaultImage, goDirective := composeDefaultImage(t), goModDirective(t)
	good := string(readFile(t, filepath.Join(repoRoot, workflowFile)))
	cases := []struct {
		name, old, new, wantErr string
	}{
		// What actionlint finds.
		{"typo in a job key", "    runs-on: ubuntu-24.04\n", "    runs_on: ubuntu-24.04\n", `unexpected key "runs_on"`},
		{"unknown matrix key in an expression", "name: e2e-envoy-${{ matrix.envoy }}", "name: e2e-envoy-${{ matrix.envoy_tag }}", `property "envoy_tag" is not defined`},
		{"unknown runner label", "runs-on: ubuntu-24.04", "runs-on: ubuntu-14.04", `label "ubuntu-14.04" is unknown`},
		{"unknown input of a known action", "          if-no-files-found: warn\n", "          if-no-file-found: warn\n", `input "if-no-file-found" is not defined`},
		{"unknown event", "  pull_request:\n", "  pull-request:\n", `unknown Webhook event "pull-request"`},
		// What the project needs.
		{"no pull requests", "  pull_request:\n", "", "does not run on pull_request"},
		{"oldest Envoy missing", "[v1.33.0, ", "[", "lacks Envoy 1.33"},
		{"no pre-fix release after 1.33", "v1.36.4, v1.38.7, ", "", "lacks a later release before the WASI fix"},
		{"no fixed release", ", v1.39.5]", "]", "lacks a release with the WASI fix"},
		{"compose default not in the matrix", "v1.36.4, ", "", "lacks docker-compose.yaml's default image"},
		{"Envoy not pinned", "v1.39.5]", "latest]", "pinned by tag"},
		{"image not from the matrix", "ENVOY_IMAGE: envoyproxy/envoy:${{ matrix.envoy }}", "ENVOY_IMAGE: envoyproxy/envoy:v1.36.4", "sets ENVOY_IMAGE"},
		{"no exit code from e2e", "docker compose up --build --exit-code-from e2e", "docker compose up --build", "no step runs"},
		{"plugin not built", "        run: make build\n", "        run: go vet ./...\n", "no step runs make build"},
		{"shallow checkout", "fetch-depth: 0", "fetch-depth: 1", "fetches depth 1"},
		{"another Go", `go-version: "1.26.x"`, `go-version: "1.25.x"`, "go.mod says go"},
		{"artifacts uploaded from elsewhere", "path: build/e2e-artifacts/", "path: build/", "actions/upload-artifact uploads"},
		{"upload only on success", "        if: failure()\n        uses: actions/upload-artifact@v4\n", "        uses: actions/upload-artifact@v4\n", "no actions/upload-artifact step with if: failure()"},
		{"Envoy's log not saved", "docker compose logs --no-color --timestamps envoy >", "docker compose logs --no-color --timestamps upstream >", "saves docker compose logs envoy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("%s no longer contains %q; update this variant", workflowFile, tc.old)
			}
			err := checkWorkflow([]byte(strings.Replace(good, tc.old, tc.new, 1)), defaultImage, goDirective)
			if err == nil {
				t.Fatal("the broken variant passed the check")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("failed for another reason than expected (%q):\n%v", tc.wantErr, err)
			}
			t.Logf("rejected: %v", err)
		})
	}
}

// TestDockerComposeEnvoyMatrix loads docker-compose.yaml with ENVOY_IMAGE
// set to every image of the workflow's matrix, as the workflow runs it, and
// checks each the way TestDockerCompose checks the default.
func TestDockerComposeEnvoyMatrix(t *testing.T) {
	boot, err := checkBootstrap(readFile(t, bootstrapFile))
	if err != nil {
		t.Fatal(err)
	}
	images, err := workflowEnvoyImages(readFile(t, filepath.Join(repoRoot, workflowFile)))
	if err != nil {
		t.Fatal(err)
	}
	compose := readFile(t, filepath.Join(repoRoot, composeFile))
	for _, img := range images {
		t.Run(img, func(t *testing.T) {
			if err := checkComposeWithImage(compose, boot, img); err != nil {
				t.Fatalf("%s with ENVOY_IMAGE=%s: %v", composeFile, img, err)
			}
		})
	}
}

func TestDockerComposeIgnoringEnvoyImage(t *testing.T) {
	boot, err := checkBootstrap(readFile(t, bootstrapFile))
	if err != nil {
		t.Fatal(err)
	}
	good := string(readFile(t, filepath.Join(repoRoot, composeFile)))
	old := "${ENVOY_IMAGE:-envoyproxy/envoy:v1.36.4}"
	if !strings.Contains(good, old) {
		t.Fatalf("%s no longer contains %q; update this test", composeFile, old)
	}
	broken := []byte(strings.Replace(good, old, "envoyproxy/envoy:v1.36.4", 1))
	err = checkComposeWithImage(broken, boot, "envoyproxy/envoy:v1.39.5")
	if err == nil || !strings.Contains(err.Error(), "does not take the Envoy image from ENVOY_IMAGE") {
		t.Fatalf("a compose file with a fixed Envoy image passed the matrix check: %v", err)
	}
}
