// Package promtext reads Prometheus text exposition (format 0.0.4) as
// Envoy's GET /stats/prometheus writes it, and so the embedded host's admin
// (internal/wasmhost): what the tests of this module scrape, without
// Prometheus's client libraries in its go.mod.
//
//	# TYPE mcp_resume_guard_events_tagged_total counter
//	mcp_resume_guard_events_tagged_total{} 2
//
// It is strict where a scraper would be: a sample must follow its family's
// TYPE line (histograms' _bucket, _sum and _count samples included), a
// name may have only one TYPE line, names and label names must be
// Prometheus's legacy ones, label values quoted and escaped, values
// numbers. That Prometheus's own parser accepts the same output is tested
// with it, where the module requires it: deploy/monitoring
// (TestAdminScrapeParses).
package promtext

import (
	"fmt"
	"strconv"
	"strings"
)

// Family is one metric: its type and samples.
type Family struct {
	Type    string // counter, gauge, histogram, summary or untyped
	Samples []Sample
}

// Sample is one line of a family.
type Sample struct {
	Name   string            // the family's name, or with a _bucket, _sum or _count suffix
	Labels map[string]string // empty for name{} or a bare name
	Value  float64
}

// Value returns the value of the family's only sample, and false when it
// has none or more than one, or the sample carries labels.
func (f Family) Value() (float64, bool) {
	if len(f.Samples) != 1 || len(f.Samples[0].Labels) != 0 {
		return 0, false
	}
	return f.Samples[0].Value, true
}

var types = map[string]bool{"counter": true, "gauge": true, "histogram": true, "summary": true, "untyped": true}

// Parse reads text into its families by name.
func Parse(text string) (map[string]Family, error) {
	fams := map[string]Family{}
	current := ""
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "#"):
			f := strings.Fields(line)
			if len(f) < 2 || f[0] != "#" || f[1] != "TYPE" {
				continue // HELP or a comment
			}
			if len(f) != 4 || !validName(f[2], true) || !types[f[3]] {
				return nil, fmt.Errorf("line %d: malformed TYPE line %q", n, line)
			}
			if _, dup := fams[f[2]]; dup {
				return nil, fmt.Errorf("line %d: a second TYPE line for %s", n, f[2])
			}
			fams[f[2]], current = Family{Type: f[3]}, f[2]
		default:
			s, err := parseSample(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w: %q", n, err, line)
			}
			if current == "" || !ofFamily(s.Name, current, fams[current].Type) {
				return nil, fmt.Errorf("line %d: sample %s outside its family's TYPE line", n, s.Name)
			}
			f := fams[current]
			f.Samples = append(f.Samples, s)
			fams[current] = f
		}
	}
	return fams, nil
}

// ofFamily reports whether a sample named name belongs to family fam.
func ofFamily(name, fam, typ string) bool {
	if name == fam {
		return true
	}
	switch typ {
	case "histogram":
		return name == fam+"_bucket" || name == fam+"_sum" || name == fam+"_count"
	case "summary":
		return name == fam+"_sum" || name == fam+"_count"
	}
	return false
}

// parseSample reads name[{labels}] value [timestamp].
func parseSample(line string) (Sample, error) {
	end := strings.IndexAny(line, "{ ")
	if end < 0 {
		return Sample{}, fmt.Errorf("no value")
	}
	s := Sample{Name: line[:end], Labels: map[string]string{}}
	if !validName(s.Name, true) {
		return Sample{}, fmt.Errorf("invalid metric name")
	}
	rest := line[end:]
	if strings.HasPrefix(rest, "{") {
		var err error
		if rest, err = parseLabels(rest[1:], s.Labels); err != nil {
			return Sample{}, err
		}
	}
	f := strings.Fields(rest)
	if len(f) < 1 || len(f) > 2 || !strings.HasPrefix(rest, " ") {
		return Sample{}, fmt.Errorf("want one value and at most a timestamp after the name")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return Sample{}, fmt.Errorf("value: %w", err)
	}
	if len(f) == 2 {
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			return Sample{}, fmt.Errorf("timestamp: %w", err)
		}
	}
	s.Value = v
	return s, nil
}

// parseLabels reads label="value" pairs up to the closing brace into
// labels and returns what follows it.
func parseLabels(s string, labels map[string]string) (string, error) {
	for {
		if strings.HasPrefix(s, "}") {
			return s[1:], nil
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 || !validName(s[:eq], false) || len(s) < eq+2 || s[eq+1] != '"' {
			return "", fmt.Errorf("malformed label")
		}
		name := s[:eq]
		var v strings.Builder
		i := eq + 2
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					v.WriteByte('\n')
				case '\\', '"':
					v.WriteByte(s[i])
				default:
					return "", fmt.Errorf("label %s: invalid escape \\%c", name, s[i])
				}
				continue
			}
			v.WriteByte(s[i])
		}
		if i == len(s) {
			return "", fmt.Errorf("label %s: unterminated value", name)
		}
		if _, dup := labels[name]; dup {
			return "", fmt.Errorf("label %s twice", name)
		}
		labels[name] = v.String()
		s = s[i+1:]
		if strings.HasPrefix(s, ",") {
			s = s[1:]
		} else if !strings.HasPrefix(s, "}") {
			return "", fmt.Errorf("want , or } after label %s", name)
		}
	}
}

// validName reports a legacy Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)
// or, without colon, label name.
func validName(s string, colon bool) bool {
	if s == "" {
		return false
	}
	for i, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || colon && c == ':' || i > 0 && c >= '0' && c <= '9'
		if !ok {
			return false
		}
	}
	return true
}
