package envoy_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/variants"
)

const (
	repoRoot    = ".."
	composeFile = "docker-compose.yaml"
	// minEnvoyMinor is the first Envoy 1.x release that loads Wasm modules
	// built with the standard Go toolchain.
	minEnvoyMinor = 33
)

// envoyImage matches an official Envoy image pinned to a release tag.
var envoyImage = regexp.MustCompile(`^envoyproxy/envoy:v1\.(\d+)\.(\d+)$`)

// composeEnv is the environment the e2e runner gets: the same variables the
// e2e tests read to target a proxy other than the embedded host.
var composeEnv = map[string]string{
	"GUARD_PROXY_ADDR":    "http://envoy:10000",
	"GUARD_UPSTREAM_ADDR": "http://upstream:8080",
	"GUARD_ADMIN_ADDR":    "http://envoy:9901",
}

// loadCompose loads a compose file the way docker compose does (schema
// validation, interpolation, normalization), from the repository root, with
// no variables set.
func loadCompose(content []byte) (*types.Project, error) {
	return loadComposeEnv(content, types.Mapping{})
}

// loadComposeEnv is loadCompose with the variables of env set, as the shell
// that runs docker compose would have them.
func loadComposeEnv(content []byte, env types.Mapping) (*types.Project, error) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		return nil, err
	}
	return loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  root,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(root, composeFile), Content: content}},
		Environment: env,
	}, func(o *loader.Options) {
		o.SetProjectName("mcp-resume-guard", true)
		o.ResolvePaths = true
	})
}

// checkCompose loads the compose file and checks that it runs the e2e suite
// against the guard in Envoy, consistently with envoy.yaml.
func checkCompose(content []byte, boot *guardDeployment) error {
	p, err := loadCompose(content)
	if err != nil {
		return fmt.Errorf("compose: %w", err)
	}
	return checkComposeProject(p, boot)
}

// checkComposeWithImage is checkCompose with ENVOY_IMAGE set to image, as
// the CI workflow runs it; Envoy must then run that image.
func checkComposeWithImage(content []byte, boot *guardDeployment, image string) error {
	p, err := loadComposeEnv(content, types.Mapping{"ENVOY_IMAGE": image})
	if err != nil {
		return fmt.Errorf("compose: %w", err)
	}
	if got := p.Services["envoy"].Image; got != image {
		return fmt.Errorf("envoy: image %q with ENVOY_IMAGE=%q: the compose file does not take the Envoy image from ENVOY_IMAGE", got, image)
	}
	return checkComposeProject(p, boot)
}

// checkComposeProject checks a loaded compose project (see checkCompose).
func checkComposeProject(p *types.Project, boot *guardDeployment) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	names := p.ServiceNames()
	slices.Sort(names)
	if !slices.Equal(names, []string{"e2e", "envoy", "upstream"}) {
		return fmt.Errorf("services %v; want envoy, upstream and e2e", names)
	}
	envoy, up, e2e := p.Services["envoy"], p.Services["upstream"], p.Services["e2e"]
	root := p.WorkingDir

	// Envoy: an official image, pinned, recent enough.
	if m := envoyImage.FindStringSubmatch(envoy.Image); m == nil {
		fail("envoy: image %q; want envoyproxy/envoy:v1.MINOR.PATCH (an official image pinned by tag)", envoy.Image)
	} else if minor, _ := strconv.Atoi(m[1]); minor < minEnvoyMinor {
		fail("envoy: image %q; Envoy before 1.%d cannot load standard-Go Wasm modules", envoy.Image, minEnvoyMinor)
	}
	// Envoy: the bootstrap and the plugin, read-only, where envoy.yaml
	// expects them.
	wantMounts := map[string]string{
		"/etc/envoy/envoy.yaml": filepath.Join(root, "envoy", "envoy.yaml"),
		boot.Plugin.GetVmConfig().GetCode().GetLocal().GetFilename(): filepath.Join(root, "build", "mcp-resume-guard.wasm"),
	}
	for target, source := range wantMounts {
		i := slices.IndexFunc(envoy.Volumes, func(v types.ServiceVolumeConfig) bool { return v.Target == target })
		switch {
		case i < 0:
			fail("envoy: nothing is mounted at %s (want %s)", target, source)
		case envoy.Volumes[i].Type != types.VolumeTypeBind || envoy.Volumes[i].Source != source:
			fail("envoy: %s is mounted from %s %s; want a bind mount of %s", target, envoy.Volumes[i].Type, envoy.Volumes[i].Source, source)
		case !envoy.Volumes[i].ReadOnly:
			fail("envoy: mount %s should be read-only", target)
		}
	}
	if !slices.Contains(envoy.Command, "/etc/envoy/envoy.yaml") {
		fail("envoy: command %q does not load /etc/envoy/envoy.yaml", envoy.Command)
	}
	// Envoy: the listener and the admin port published, as envoy.yaml has
	// them.
	listenPort := boot.Bootstrap.GetStaticResources().GetListeners()[0].GetAddress().GetSocketAddress().GetPortValue()
	for _, port := range []uint32{listenPort, adminPort} {
		if !slices.ContainsFunc(envoy.Ports, func(pc types.ServicePortConfig) bool {
			return pc.Target == port && pc.Published == strconv.Itoa(int(port))
		}) {
			fail("envoy: port %d is not published as %d:%d", port, port, port)
		}
	}

	// The upstream: built from this repository, listening where envoy.yaml
	// sends the MCP routes.
	checkBuild(fail, root, "upstream", up, "./cmd/mcp-dualstack")
	ep := boot.Bootstrap.GetStaticResources().GetClusters()[0].GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
	if ep.GetAddress() != "upstream" {
		fail("envoy.yaml sends the MCP routes to %q; the compose service is upstream", ep.GetAddress())
	}
	wantCmd := []string{"-listen", "0.0.0.0:" + strconv.Itoa(int(ep.GetPortValue())), "-first-event-id", "100"}
	if !slices.Equal(up.Command, wantCmd) {
		fail("upstream: command %q; want %q", up.Command, wantCmd)
	}

	// The e2e runner: built from this repository, pointed at Envoy.
	checkBuild(fail, root, "e2e", e2e, "./e2e/")
	for k, want := range composeEnv {
		if got := e2e.Environment[k]; got == nil || *got != want {
			fail("e2e: environment %s = %v; want %s", k, deref(got), want)
		}
	}
	for _, dep := range []string{"envoy", "upstream"} {
		if _, ok := e2e.DependsOn[dep]; !ok {
			fail("e2e: does not depend on %s", dep)
		}
	}
	if !strings.Contains(strings.Join(e2e.Command, " "), "go test ./e2e/ -count=1") {
		fail("e2e: command %q does not run go test ./e2e/ -count=1", e2e.Command)
	}
	// The e2e runner: leaves Envoy's counters where the CI workflow
	// uploads them from when a job fails.
	artifacts := filepath.Join(root, "build", "e2e-artifacts")
	if !slices.ContainsFunc(e2e.Volumes, func(v types.ServiceVolumeConfig) bool {
		return v.Type == types.VolumeTypeBind && v.Source == artifacts && v.Target == "/artifacts"
	}) {
		fail("e2e: %s is not bind-mounted at /artifacts", artifacts)
	}
	if cmd := strings.Join(e2e.Command, " "); !regexp.MustCompile(`curl [^;]*-o /artifacts/\S+ "\$GUARD_ADMIN_ADDR/stats/prometheus"`).MatchString(cmd) {
		fail("e2e: command %q does not save Envoy's /stats/prometheus under /artifacts", e2e.Command)
	}
	return errors.Join(errs...)
}

// checkBuild checks that service s is built from the repository root by a
// Dockerfile that exists and builds pkg.
func checkBuild(fail func(string, ...any), root, name string, s types.ServiceConfig, pkg string) {
	if s.Build == nil {
		fail("%s: not built from this repository", name)
		return
	}
	if s.Build.Context != root {
		fail("%s: build context %s; want the repository root %s", name, s.Build.Context, root)
	}
	df, err := os.ReadFile(filepath.Join(s.Build.Context, s.Build.Dockerfile))
	if err != nil {
		fail("%s: %v", name, err)
		return
	}
	if !regexp.MustCompile(`(?m)^FROM golang:1\.\d+`).Match(df) {
		fail("%s: %s does not build with an official golang image", name, s.Build.Dockerfile)
	}
	if !strings.Contains(string(df), pkg) {
		fail("%s: %s does not mention %s", name, s.Build.Dockerfile, pkg)
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func TestDockerCompose(t *testing.T) {
	boot, err := checkBootstrap(readFile(t, bootstrapFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkCompose(readFile(t, filepath.Join(repoRoot, composeFile)), boot); err != nil {
		t.Fatalf("%s: %v", composeFile, err)
	}
}

func TestDockerComposeBrokenVariants(t *testing.T) {
	boot, err := checkBootstrap(readFile(t, bootstrapFile))
	if err != nil {
		t.Fatal(err)
	}
	good := string(readFile(t, filepath.Join(repoRoot, composeFile)))
	cases := []struct {
		name, old, new, wantErr string
	}{
		{"typo in a key", "    volumes:\n", "    volumnes:\n", "volumnes"},
		{"Envoy too old", "envoyproxy/envoy:v1.36.4", "envoyproxy/envoy:v1.32.6", "before 1.33"},
		{"Envoy not pinned", "envoyproxy/envoy:v1.36.4", "envoyproxy/envoy:latest", "pinned by tag"},
		{"plugin not mounted", "        source: ./build/mcp-resume-guard.wasm\n        target: /etc/envoy/mcp-resume-guard.wasm\n", "        source: ./build/mcp-resume-guard.wasm\n        target: /etc/envoy/plugin.wasm\n", "nothing is mounted at /etc/envoy/mcp-resume-guard.wasm"},
		{"plugin from elsewhere", "source: ./build/mcp-resume-guard.wasm", "source: ./mcp-resume-guard.wasm", "want a bind mount"},
		{"writable mount", "        target: /etc/envoy/envoy.yaml\n        read_only: true\n", "        target: /etc/envoy/envoy.yaml\n", "read-only"},
		{"admin port not published", `      - "9901:9901"`, `      - "19901:9901"`, "port 9901 is not published"},
		{"proxy address wrong", "GUARD_PROXY_ADDR: http://envoy:10000", "GUARD_PROXY_ADDR: http://upstream:8080", "GUARD_PROXY_ADDR"},
		{"upstream seed IDs off", `"-first-event-id", "100"`, `"-first-event-id", "1"`, "upstream: command"},
		{"upstream Dockerfile missing", "dockerfile: e2e/docker/upstream.Dockerfile", "dockerfile: e2e/docker/Dockerfile", "no such file"},
		{"e2e does not wait for Envoy", "    depends_on:\n      - envoy\n", "    depends_on:\n", "does not depend on envoy"},
		{"unknown service key", "  e2e:\n", "  e2e:\n    restart_policy: always\n", "restart_policy"},
		{"no artifacts mount", "        target: /artifacts\n", "        target: /tmp/artifacts\n", "not bind-mounted at /artifacts"},
		{"counters not saved", `-o /artifacts/envoy-stats-prometheus.txt "$$GUARD_ADMIN_ADDR/stats/prometheus"`, `-o /artifacts/envoy-stats-prometheus.txt "$$GUARD_ADMIN_ADDR/ready"`, "does not save Envoy's /stats/prometheus"},
		{"port out of range", `      - "10000:10000"`, `      - "10000:100000"`, "100000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("%s no longer contains %q; update this variant", composeFile, tc.old)
			}
			err := checkCompose([]byte(strings.Replace(good, tc.old, tc.new, 1)), boot)
			variants.Check(t, err, tc.wantErr)
		})
	}
}
