package doccheck

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Names are the names of the product's interface that the docs may
// mention: every one a Markdown file names must exist in the code.
type Names struct {
	// Reasons are the reason names of the plugin's replies and log lines
	// ("cross_transport", ...).
	Reasons []string
	// Counters are the full names of the plugin's counters
	// ("mcp_resume_guard_fail_open_total", ...).
	Counters []string
}

var (
	// reasonUseRE finds a reason name where the docs quote a body or a
	// log line: "reason":"x", reason=x, reinit:x.
	reasonUseRE = regexp.MustCompile(`(?:"reason"\s*:\s*"|\breason=|\breinit:)([a-z][a-z0-9_]*)`)
	// counterRE finds a counter name.
	counterRE = regexp.MustCompile(`\bmcp_resume_guard_[a-z0-9_]*_total\b`)
	// codeCellRE is a table row's first cell when it is one code span.
	codeCellRE = regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|")
)

// CheckNames reports every reason name and counter name a Markdown file
// under root mentions that names does not hold. Reason names are read
// where a body or log line is quoted ("reason":"x", reason=x, reinit:x)
// and from the first column of every table whose header's first cell
// starts with "reason"; counter names wherever they appear.
func CheckNames(root string, names Names) ([]Problem, error) {
	var out []Problem
	err := walkMarkdown(root, func(rel, text string) {
		out = append(out, checkNames(rel, text, names)...)
	})
	return out, err
}

func checkNames(file, text string, names Names) []Problem {
	var out []Problem
	reasonTable := false
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		cell := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "|"))
		switch {
		case !strings.HasPrefix(strings.TrimSpace(line), "|"):
			reasonTable = false
		case strings.HasPrefix(cell, "reason"):
			reasonTable = true
		case reasonTable:
			if m := codeCellRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil && !slices.Contains(names.Reasons, m[1]) {
				out = append(out, Problem{file, n, fmt.Sprintf("a table of reasons names %q, which is no reason the plugin gives (want one of %s)", m[1], strings.Join(names.Reasons, ", "))})
			}
		}
		for _, m := range reasonUseRE.FindAllStringSubmatch(line, -1) {
			if !slices.Contains(names.Reasons, m[1]) {
				out = append(out, Problem{file, n, fmt.Sprintf("quotes reason %q, which is no reason the plugin gives (want one of %s)", m[1], strings.Join(names.Reasons, ", "))})
			}
		}
		for _, m := range counterRE.FindAllString(line, -1) {
			if !slices.Contains(names.Counters, m) {
				out = append(out, Problem{file, n, fmt.Sprintf("names counter %s, which the plugin does not define (package counters)", m)})
			}
		}
	}
	return out
}
