package promtext

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	text := "# TYPE probe_requests counter\nprobe_requests{} 1\n\n" +
		"# HELP envoy_up the host\n# TYPE envoy_wasmhost_vm_0_memory_bytes gauge\nenvoy_wasmhost_vm_0_memory_bytes 65536\n\n" +
		"# TYPE lat histogram\nlat_bucket{le=\"+Inf\"} 3\nlat_sum{} 12\nlat_count{} 3\n\n" +
		"# TYPE tagged counter\ntagged{route=\"a\\\"b\\\\c\\n\",vm=\"0\"} 2 1700000000000\n"
	fams, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Family{
		"probe_requests":                   {Type: "counter", Samples: []Sample{{Name: "probe_requests", Labels: map[string]string{}, Value: 1}}},
		"envoy_wasmhost_vm_0_memory_bytes": {Type: "gauge", Samples: []Sample{{Name: "envoy_wasmhost_vm_0_memory_bytes", Labels: map[string]string{}, Value: 65536}}},
		"lat": {Type: "histogram", Samples: []Sample{
			{Name: "lat_bucket", Labels: map[string]string{"le": "+Inf"}, Value: 3},
			{Name: "lat_sum", Labels: map[string]string{}, Value: 12},
			{Name: "lat_count", Labels: map[string]string{}, Value: 3},
		}},
		"tagged": {Type: "counter", Samples: []Sample{{Name: "tagged", Labels: map[string]string{"route": "a\"b\\c\n", "vm": "0"}, Value: 2}}},
	}
	if !reflect.DeepEqual(fams, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", fams, want)
	}
	if v, ok := fams["probe_requests"].Value(); !ok || v != 1 {
		t.Errorf("probe_requests Value = %v, %v", v, ok)
	}
	for _, name := range []string{"lat", "tagged", "absent"} {
		if _, ok := fams[name].Value(); ok {
			t.Errorf("%s: Value ok; want false (several samples, labels or none)", name)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for text, want := range map[string]string{
		"x{} 1\n":                                    "outside its family",
		"# TYPE x counter\ny{} 1\n":                  "outside its family",
		"# TYPE x counter\nx_count{} 1\n":            "outside its family",
		"# TYPE x counter\n# TYPE x counter\n":       "second TYPE",
		"# TYPE x meter\n":                           "malformed TYPE",
		"# TYPE 0x counter\n":                        "malformed TYPE",
		"# TYPE x.y counter\nx.y{} 1\n":              "malformed TYPE",
		"# TYPE x counter\nx{} one\n":                "value",
		"# TYPE x counter\nx{}\n":                    "want one value",
		"# TYPE x counter\nx\n":                      "no value",
		"# TYPE x counter\nx{} 1 2 3\n":              "want one value",
		"# TYPE x counter\nx{}1\n":                   "want one value",
		"# TYPE x counter\nx{a=1} 1\n":               "malformed label",
		"# TYPE x counter\nx{a-b=\"1\"} 1\n":         "malformed label",
		"# TYPE x counter\nx{a=\"1} 1\n":             "unterminated",
		"# TYPE x counter\nx{a=\"1\",a=\"2\"} 1\n":   "twice",
		"# TYPE x counter\nx{a=\"\\t\"} 1\n":         "invalid escape",
		"# TYPE x counter\nx{a=\"1\" b=\"2\"} 1\n":   "want , or }",
		"# TYPE x counter\nx{} 1 now\n":              "timestamp",
		"# TYPE x counter\nx y 1\n":                  "value",
		"# TYPE x counter\n{} 1\n":                   "invalid metric name",
		"# TYPE x gauge\nx{} 1\n# TYPE y gauge\nx 2": "outside its family",
	} {
		if _, err := Parse(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v; want an error with %q", text, err, want)
		}
	}
}
