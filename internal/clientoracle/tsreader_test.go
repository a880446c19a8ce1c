package clientoracle

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// tsView is what the official TypeScript SDK's reader (eventsource-parser's
// EventSourceParserStream behind a TextDecoderStream) emits for a stream.
type tsView struct {
	Events  []tsEvent `json:"events"`
	Retries []float64 `json:"retries"`
	Error   string    `json:"error"`
}

// tsEvent is one parsed event; nil fields were undefined.
type tsEvent struct {
	ID    *string `json:"id"`
	Event *string `json:"event"`
	Data  string  `json:"data"`
}

// tsDir is the node module that runs the reader (make test installs it
// with npm ci from its committed package-lock.json).
const tsDir = "tsreader"

// readTS reads every stream with one node process.
func readTS(t testing.TB, streams [][][]byte) []tsView {
	t.Helper()
	if _, err := os.Stat(filepath.Join(tsDir, "node_modules", "eventsource-parser", "package.json")); errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s/node_modules is missing: make test installs it (or run: npm ci --prefix internal/clientoracle/%s)", tsDir, tsDir)
	}
	var in bytes.Buffer
	for _, chunks := range streams {
		enc := make([]string, len(chunks))
		for i, c := range chunks {
			enc[i] = base64.StdEncoding.EncodeToString(c)
		}
		b, _ := json.Marshal(enc)
		in.Write(b)
		in.WriteByte('\n')
	}
	cmd := exec.Command("node", "read.mjs")
	cmd.Dir = tsDir
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s/read.mjs: %v\n%s", tsDir, err, stderr.String())
	}
	views := make([]tsView, 0, len(streams))
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var v tsView
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("node %s/read.mjs wrote %q: %v", tsDir, sc.Text(), err)
		}
		views = append(views, v)
	}
	if len(views) != len(streams) {
		t.Fatalf("node %s/read.mjs answered %d streams of %d", tsDir, len(views), len(streams))
	}
	return views
}
