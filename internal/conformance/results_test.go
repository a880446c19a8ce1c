package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Check statuses as the suite writes them in checks.json.
const (
	statusSuccess = "SUCCESS"
	statusFailure = "FAILURE"
	statusWarning = "WARNING"
)

// Verdicts of a scenario, as the CONFORMANCE lines spell them.
const (
	verdictPass = "pass" // no check failed or warned
	verdictWarn = "warn" // a check warned (a SHOULD the peer does not do), none failed
	verdictFail = "fail" // a check failed
)

// check is one entry of a scenario's checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// result is what the suite wrote for one scenario: its checks.json, and
// for a client scenario the client's stdout.
type result struct {
	Scenario string
	Checks   []check
	Stdout   string
}

// verdict sums up the checks: any FAILURE fails the scenario, else any
// WARNING makes it warn. INFO checks only record what happened.
func (r result) verdict() string {
	v := verdictPass
	for _, c := range r.Checks {
		switch c.Status {
		case statusFailure:
			return verdictFail
		case statusWarning:
			v = verdictWarn
		}
	}
	return v
}

// counted returns how many checks passed of those that pass or fail, as
// the suite's own summary counts them ("3/3").
func (r result) counted() string {
	var ok, all int
	for _, c := range r.Checks {
		switch c.Status {
		case statusSuccess:
			ok++
			all++
		case statusFailure:
			all++
		}
	}
	return fmt.Sprintf("%d/%d", ok, all)
}

// withStatus returns the IDs of the checks with the given status.
func (r result) withStatus(status string) []string {
	var ids []string
	for _, c := range r.Checks {
		if c.Status == status {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// graded returns r with only the checks that grade the peer (SUCCESS,
// FAILURE, WARNING): a client scenario's INFO checks log each request,
// and their number depends on timing (a standalone GET stream's reconnects).
func (r result) graded() result {
	g := r
	g.Checks = slices.DeleteFunc(slices.Clone(r.Checks), func(c check) bool {
		return c.Status != statusSuccess && c.Status != statusFailure && c.Status != statusWarning
	})
	return g
}

// statuses maps each check ID to its statuses in order (an ID may repeat).
func (r result) statuses() map[string][]string {
	m := map[string][]string{}
	for _, c := range r.Checks {
		m[c.ID] = append(m[c.ID], c.Status)
	}
	return m
}

// message returns the error message of the first check with this ID that
// has one.
func (r result) message(id string) string {
	for _, c := range r.Checks {
		if c.ID == id && c.ErrorMessage != "" {
			return c.ErrorMessage
		}
	}
	return ""
}

// diffChecks describes every check whose statuses differ between two runs
// of one scenario, one line each, sorted by check ID; nil when they agree.
func diffChecks(direct, guarded result) []string {
	d, g := direct.statuses(), guarded.statuses()
	ids := make([]string, 0, len(d)+len(g))
	for id := range d {
		ids = append(ids, id)
	}
	for id := range g {
		if _, ok := d[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var out []string
	for _, id := range ids {
		if slices.Equal(d[id], g[id]) {
			continue
		}
		line := fmt.Sprintf("check %s: direct %s, guarded %s", id, statusList(d[id]), statusList(g[id]))
		if m := guarded.message(id); m != "" {
			line += ": guarded: " + m
		}
		if m := direct.message(id); m != "" {
			line += ": direct: " + m
		}
		out = append(out, line)
	}
	return out
}

func statusList(s []string) string {
	if len(s) == 0 {
		return "absent"
	}
	return strings.Join(s, ",")
}

// resultDir matches the folder the suite writes a scenario's results to:
// [server-]<scenario>-<ISO time with ':' and '.' as '-'>.
var resultDir = regexp.MustCompile(`^(?:server-)?(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// readResults reads every scenario's results under dir (the suite's -o),
// by scenario name.
func readResults(dir string) (map[string]result, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the suite's results: %w", err)
	}
	out := map[string]result{}
	for _, e := range entries {
		m := resultDir.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		r, err := readResult(filepath.Join(dir, e.Name()), m[1])
		if err != nil {
			return nil, err
		}
		if _, dup := out[r.Scenario]; dup {
			return nil, fmt.Errorf("%s: scenario %s has two result folders (one output folder per run)", dir, r.Scenario)
		}
		out[r.Scenario] = r
	}
	return out, nil
}

// readResult reads one scenario's folder: checks.json, and stdout.txt
// where the suite wrote one (client scenarios).
func readResult(dir, scenario string) (result, error) {
	r := result{Scenario: scenario}
	b, err := os.ReadFile(filepath.Join(dir, "checks.json"))
	if err != nil {
		return r, fmt.Errorf("scenario %s: %w", scenario, err)
	}
	if err := json.Unmarshal(b, &r.Checks); err != nil {
		return r, fmt.Errorf("scenario %s: %s is not the suite's list of checks: %w", scenario, filepath.Join(dir, "checks.json"), err)
	}
	if out, err := os.ReadFile(filepath.Join(dir, "stdout.txt")); err == nil {
		r.Stdout = string(out)
	}
	return r, nil
}

func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		statuses []string
		want     string
	}{
		{nil, verdictPass},
		{[]string{"INFO", statusSuccess}, verdictPass},
		{[]string{statusSuccess, statusWarning, "INFO"}, verdictWarn},
		{[]string{statusWarning, statusFailure, statusSuccess}, verdictFail},
	} {
		var r result
		for i, s := range tc.statuses {
			r.Checks = append(r.Checks, check{ID: fmt.Sprint(i), Status: s})
		}
		if got := r.verdict(); got != tc.want {
			t.Errorf("verdict of %v = %s, want %s", tc.statuses, got, tc.want)
		}
	}
}

func TestDiffChecks(t *testing.T) {
	direct := result{Checks: []check{{ID: "a", Status: statusSuccess}, {ID: "b", Status: statusSuccess}, {ID: "c", Status: "INFO"}}}
	same := result{Checks: []check{{ID: "c", Status: "INFO"}, {ID: "b", Status: statusSuccess}, {ID: "a", Status: statusSuccess}}}
	if d := diffChecks(direct, same); d != nil {
		t.Errorf("the same checks in another order differ: %q", d)
	}
	guarded := result{Checks: []check{{ID: "a", Status: statusFailure, ErrorMessage: "no result"}, {ID: "c", Status: "INFO"}, {ID: "d", Status: "INFO"}}}
	want := []string{
		"check a: direct SUCCESS, guarded FAILURE: guarded: no result",
		"check b: direct SUCCESS, guarded absent",
		"check d: direct absent, guarded INFO",
	}
	if d := diffChecks(direct, guarded); !slices.Equal(d, want) {
		t.Errorf("diffChecks =\n%s\nwant\n%s", strings.Join(d, "\n"), strings.Join(want, "\n"))
	}
}

func TestReadResults(t *testing.T) {
	dir := t.TempDir()
	write := func(name, file, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("server-tools-call-simple-text-2026-12-03T15-23-05-634Z", "checks.json", `[{"id":"tools-call","status":"SUCCESS"}]`)
	write("sse-retry-2026-12-03T15-23-17-884Z", "checks.json", `[{"id":"client-sse-retry-timing","status":"FAILURE","errorMessage":"too soon"}]`)
	write("sse-retry-2026-12-03T15-23-17-884Z", "stdout.txt", "GUARD requests=1\n")
	write("notes", "checks.json", `[]`) // not a result folder
	got, err := readResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["tools-call-simple-text"].verdict() != verdictPass ||
		got["sse-retry"].verdict() != verdictFail || got["sse-retry"].Stdout != "GUARD requests=1\n" {
		t.Errorf("readResults = %+v", got)
	}
	write("server-ping-2026-12-03T15-23-05-634Z", "checks.json", `{"id":"ping"}`)
	if _, err := readResults(dir); err == nil || !strings.Contains(err.Error(), "scenario ping") {
		t.Errorf("a checks.json that is not a list: err = %v, want one naming the scenario", err)
	}
}
