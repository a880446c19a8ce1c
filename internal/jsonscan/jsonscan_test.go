package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestForEachObject(t *testing.T) {
	v := Parse(` {"method":"ping", "id" : 1,"params":{"a":[1,{"b":"}"}]},"t":true,"n":null,"esc\u0061ped":"x\"y"} `)
	if !v.IsObject() {
		t.Fatalf("type %v", v.Type)
	}
	var got []string
	v.ForEach(func(k, val Value) bool {
		got = append(got, k.Str+"="+val.Raw)
		return true
	})
	want := []string{`method="ping"`, `id=1`, `params={"a":[1,{"b":"}"}]}`, `t=true`, `n=null`, `escaped="x\"y"`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("members\n got %q\nwant %q", got, want)
	}
}

// TestForEachPrefixes walks prefixes of JSON cut at every offset: members
// before the cut are reported whole; a cut-short object or array value is
// reported as far as it goes, a cut-short string or missing value is not,
// and a number reaching the cut is.
func TestForEachPrefixes(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{`{"method":"x","id":12`, `method="x" id=12`},
		{`{"method":"x","id":"ab`, `method="x"`},
		{`{"method":"x","id":`, `method="x"`},
		{`{"method":"x","id"`, `method="x"`},
		{`{"method":"x","i`, `method="x"`},
		{`{"a":{"b":1`, `a={"b":1`},
		{`{"a":[1,2`, `a=[1,2`},
		{`{"a":"x\"`, ``},
		{`[{"a":1},{"b":2`, `={"a":1} ={"b":2`},
		{`[1,"x",`, `=1 ="x"`},
	} {
		var got []string
		Parse(c.text).ForEach(func(k, v Value) bool {
			got = append(got, k.Str+"="+v.Raw)
			return true
		})
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: got %q, want %q", c.text, g, c.want)
		}
	}
}

func TestForEachStops(t *testing.T) {
	n := 0
	Parse(`[1,2,3]`).ForEach(func(_, _ Value) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("called %d times after returning false at 2", n)
	}
	if a := Parse(`[1, "a", {"b":2}, [3]]`).Array(); len(a) != 4 || a[1].Str != "a" || a[2].Index != 9 || !a[3].IsArray() {
		t.Errorf("Array() = %+v", a)
	}
}

func TestParseScalars(t *testing.T) {
	for _, c := range []struct {
		text string
		typ  Type
		str  string
	}{
		{`"a\nb\u00e9\ud83d\ude00"`, String, "a\nb\u00e9\U0001F600"},
		{`"\ud800x"`, String, "\uFFFDx"},
		{` -1.5e3 `, Number, ""}, {`true`, True, ""}, {`false`, False, ""}, {`null`, Null, ""},
		{`"cut`, Invalid, ""}, {``, Invalid, ""}, {`   `, Invalid, ""}, {`}`, Invalid, ""},
	} {
		v := Parse(c.text)
		if v.Type != c.typ || v.Str != c.str {
			t.Errorf("Parse(%q) = %v %q, want %v %q", c.text, v.Type, v.Str, c.typ, c.str)
		}
	}
}

func TestValid(t *testing.T) {
	for _, s := range []string{`{}`, ` [] `, `{"a":[1,-0.5e+3,true,false,null,"\u00e9\n"]}`, `"x"`, `0`, `-0`, `1E9`} {
		if !Valid(s) {
			t.Errorf("Valid(%q) = false", s)
		}
	}
	for _, s := range []string{``, `{`, `{"a"}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `-`, `+1`, `1e`, `tru`, `"a`, "\"\x01\"", `"\x"`, `"\u12"`, `{} {}`, `{a:1}`, `[1 2]`, strings.Repeat("[", 2000) + strings.Repeat("]", 2000)} {
		if Valid(s) {
			t.Errorf("Valid(%q) = true", s)
		}
	}
}

// FuzzValid compares Valid with encoding/json, which agrees on everything
// but nesting deeper than maxDepth (rejected here).
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `[1e5,-0.1,"\u00e9"]`, `{"a":`, `01`, `"\ud800"`, `{"a":1,}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := Valid(s), json.Valid([]byte(s))
		if got != want && !(want && strings.Count(s, "[")+strings.Count(s, "{") > maxDepth) {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", s, got, want)
		}
	})
}

// FuzzObject compares the members and decoded strings of valid objects
// with encoding/json's, and walks every prefix of the text without
// panicking, reporting members in the order of the whole text's.
func FuzzObject(f *testing.F) {
	for _, s := range []string{`{"method":"x","id":1}`, `{"a\u0062":"\ud83d\ude00","c":[1,{"d":2}]}`, `{"a":"\ud800\u0041"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for cut := 0; cut <= len(s); cut++ {
			Parse(s[:cut]).ForEach(func(_, _ Value) bool { return true })
		}
		if !Valid(s) || !utf8.ValidString(s) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber()
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return
		}
		var keys, strs []string
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				t.Fatal(err)
			}
			var str string
			if json.Unmarshal(raw, &str) == nil {
				strs = append(strs, str)
			}
			keys = append(keys, k.(string))
		}
		var gotKeys, gotStrs []string
		Parse(s).ForEach(func(k, v Value) bool {
			gotKeys = append(gotKeys, k.Str)
			if v.Type == String {
				gotStrs = append(gotStrs, v.Str)
			}
			return true
		})
		if strings.Join(gotKeys, "\x00") != strings.Join(keys, "\x00") || strings.Join(gotStrs, "\x00") != strings.Join(strs, "\x00") {
			t.Fatalf("%q: keys %q strings %q, encoding/json: %q %q", s, gotKeys, gotStrs, keys, strs)
		}
	})
}
