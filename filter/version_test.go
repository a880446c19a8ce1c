package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue/builder"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// startLinePattern matches the start message and captures the version and
// the commit.
var startLinePattern = regexp.MustCompile(`^mcp-resume-guard (\S+) \((\S+)\) started, routes: .+$`)

func TestStartMessage(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.4.0-3-gabcdef0", "abcdef0123456789abcdef0123456789abcdef01"
	cases := []struct{ name, cfg, routes string }{
		{"no routes", `{}`, "none"},
		{"by name", `{"routes":[{"route_name":"mcp-streamable","transport":"http"}]}`, "mcp-streamable (http)"},
		{"by path, by both", `{"routes":[
			{"path_prefix":"/sse","transport":"sse"},
			{"route_name":"legacy","path_prefix":"/messages","transport":"sse"},
			{"path_prefix":"/mcp","transport":"http"}]}`, "/sse* (sse), legacy /messages* (sse), /mcp* (http)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(tc.cfg))
			if err != nil {
				t.Fatal(err)
			}
			want := "mcp-resume-guard v1.4.0-3-gabcdef0 (abcdef0123456789abcdef0123456789abcdef01) started, routes: " + tc.routes
			if got := startMessage(cfg.Routes); got != want {
				t.Errorf("start message\n got %q\nwant %q", got, want)
			}
		})
	}
}

// startLines starts wasm in the embedded host (Envoy 1.33–1.38's WASI) with
// the plugin configuration cfg and returns the plugin's info lines that
// match startLinePattern, one per VM.
func startLines(t *testing.T, wasm []byte, cfg string) []string {
	t.Helper()
	logs := &logCapture{}
	h, err := wasmhost.New(context.Background(), wasmhost.Options{
		Wasm: wasm, PluginConfig: []byte(cfg), VMs: 2, Logger: slog.New(logs),
	})
	if err != nil {
		t.Fatalf("plugin start: %v\n%s", err, logs.dump())
	}
	h.Close(context.Background())
	var lines []string
	for _, r := range logs.recs {
		if r.plugin && r.level == slog.LevelInfo && startLinePattern.MatchString(r.msg) {
			lines = append(lines, r.msg)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d start lines from 2 VMs; want one each. Log:\n%s", len(lines), logs.dump())
	}
	return lines
}

// TestStampedBuildLogsItsVersion builds the plugin with a stamp no other
// build has and checks that the module carries it and logs it on start.
func TestStampedBuildLogsItsVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin")
	}
	nonce := make([]byte, 20)
	rand.Read(nonce)
	ver, com := "v0.0.0-stamptest."+hex.EncodeToString(nonce[:4]), hex.EncodeToString(nonce)
	dir := t.TempDir()
	res, err := builder.Build(context.Background(), builder.Options{
		Package: "./filter", Output: filepath.Join(dir, "stamped.wasm"),
		Dir: "..", WorkDir: filepath.Join(dir, "work"), Log: io.Discard,
		LDFlags: "-X main.version=" + ver + " -X main.commit=" + com,
	})
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(res.Output)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{ver, com} {
		if !bytes.Contains(wasm, []byte(s)) {
			t.Errorf("the stamped module does not contain %q", s)
		}
	}
	want := "mcp-resume-guard " + ver + " (" + com + ") started, routes: mcp-streamable (http), /sse* (sse)"
	for _, line := range startLines(t, wasm, `{"routes":[{"route_name":"mcp-streamable","transport":"http"},{"path_prefix":"/sse","transport":"sse"}]}`) {
		if line != want {
			t.Errorf("start line\n got %q\nwant %q", line, want)
		}
	}
}

// TestMakeBuildIsStamped reads the stamp from the module make build wrote:
// its start line names a version and a commit of this repository.
func TestMakeBuildIsStamped(t *testing.T) {
	wasm, err := wasmBytes()
	if err != nil {
		t.Fatal(err)
	}
	m := startLinePattern.FindStringSubmatch(startLines(t, wasm, `{}`)[0])
	ver, com := m[1], m[2]
	for _, s := range []string{ver, com} {
		if !bytes.Contains(wasm, []byte(s)) {
			t.Errorf("%s logs %q but does not contain it", builtWasm, s)
		}
	}
	if err := exec.Command("git", "rev-parse", "--git-dir").Run(); err != nil {
		t.Skipf("version %s, commit %s; not in a git repository, so make build has no commit to stamp (%v)", ver, com, err)
	}
	if com == "unknown" {
		t.Fatalf("%s carries no commit (version %q): build it with make build, which stamps it", builtWasm, ver)
	}
	if out, err := exec.Command("git", "cat-file", "-t", com).Output(); err != nil || strings.TrimSpace(string(out)) != "commit" {
		t.Errorf("%s names commit %q, which is not a commit of this repository (%v)", builtWasm, com, err)
	}
	t.Logf("%s: version %s, commit %s", builtWasm, ver, com)
}
