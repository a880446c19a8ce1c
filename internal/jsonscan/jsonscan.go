// Package jsonscan reads JSON in place: a strict validity check, the first
// value of a text, and iteration over the members of an object or the
// elements of an array, without reflection and without copying anything but
// strings that contain escapes.
//
// It replaces github.com/tidwall/gjson in the plugin, whose modifiers pull
// encoding/json, reflect and fmt into the .wasm (about a third of its size)
// although the plugin only ever walks one level of a small object.
//
// Iteration is lenient, for prefixes of JSON cut anywhere (an SSE event's
// data is classified from its first bytes): a member whose value is an
// object or array cut short is reported with what is there; one whose
// string value is cut short, or whose value is missing, ends the iteration
// before it; a number or literal reaching the end of the text is reported.
// What iteration does with text that is not a prefix of JSON is unspecified
// but safe: it never panics and never reads outside the text.
//
//	v := jsonscan.Parse(`{"method":"ping","id":1}`)
//	v.ForEach(func(key, value jsonscan.Value) bool {
//		fmt.Println(key.Str, value.Raw) // method "ping", then id 1
//		return true
//	})
package jsonscan

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Type is the type of a JSON value.
type Type uint8

// The types of JSON values; Invalid is the zero Value's (nothing there).
const (
	Invalid Type = iota
	Null
	False
	True
	Number
	String
	Object
	Array
)

// Value is one JSON value of a text.
type Value struct {
	Type Type
	// Raw is the value's text: an object or array cut short by the end of
	// the text is Raw up to that end.
	Raw string
	// Str is a string value with its escapes decoded (Type String).
	Str string
	// Index is the offset of Raw in the text given to Parse.
	Index int
}

// IsObject reports whether v is an object.
func (v Value) IsObject() bool { return v.Type == Object }

// IsArray reports whether v is an array.
func (v Value) IsArray() bool { return v.Type == Array }

// Parse returns the first value of text (after leading whitespace), or the
// zero Value when there is none or it is cut short (a string, number or
// literal must be whole; an object or array may be cut short).
func Parse(text string) Value {
	i := skipSpace(text, 0)
	v, _, ok := value(text, i)
	if !ok {
		return Value{}
	}
	return v
}

// value reads the value starting at text[i]. ok is false when there is none
// (end of text, or a byte no value starts with) or a string is cut short.
// next is the offset just past the value.
func value(text string, i int) (v Value, next int, ok bool) {
	if i >= len(text) {
		return Value{}, i, false
	}
	switch c := text[i]; {
	case c == '{' || c == '[':
		end := skipComposite(text, i)
		t := Object
		if c == '[' {
			t = Array
		}
		return Value{Type: t, Raw: text[i:end], Index: i}, end, true
	case c == '"':
		end, ok := skipString(text, i)
		if !ok {
			return Value{}, end, false
		}
		raw := text[i:end]
		return Value{Type: String, Raw: raw, Str: unquote(raw), Index: i}, end, true
	case c == '-' || c >= '0' && c <= '9':
		end := skipToken(text, i)
		return Value{Type: Number, Raw: text[i:end], Index: i}, end, true
	case c == 't' || c == 'f' || c == 'n':
		end := skipToken(text, i)
		t := Null
		if c == 't' {
			t = True
		} else if c == 'f' {
			t = False
		}
		return Value{Type: t, Raw: text[i:end], Index: i}, end, true
	}
	return Value{}, i, false
}

// ForEach calls fn for each member of an object (key and value) or each
// element of an array (a zero key), in order, until fn returns false or the
// members end. It does nothing for other values.
func (v Value) ForEach(fn func(key, value Value) bool) {
	if v.Type != Object && v.Type != Array {
		return
	}
	text, obj := v.Raw, v.Type == Object
	i := 1
	for {
		i = skipSpace(text, i)
		if i < len(text) && text[i] == ',' {
			i = skipSpace(text, i+1)
		}
		if i >= len(text) || text[i] == '}' || text[i] == ']' {
			return
		}
		var key Value
		if obj {
			if text[i] != '"' {
				return
			}
			end, ok := skipString(text, i)
			if !ok {
				return
			}
			key = Value{Type: String, Raw: text[i:end], Str: unquote(text[i:end]), Index: v.Index + i}
			i = skipSpace(text, end)
			if i >= len(text) || text[i] != ':' {
				return
			}
			i = skipSpace(text, i+1)
		}
		val, next, ok := value(text, i)
		if !ok {
			return
		}
		val.Index += v.Index
		if !fn(key, val) {
			return
		}
		i = next
	}
}

// Array returns the elements of an array (nil for other values).
func (v Value) Array() []Value {
	var out []Value
	v.ForEach(func(_, e Value) bool {
		out = append(out, e)
		return true
	})
	return out
}

func skipSpace(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset past the string starting at text[i] (a
// quote); ok is false when the text ends first.
func skipString(text string, i int) (int, bool) {
	for i++; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return len(text), false
}

// skipToken returns the offset past a number or literal starting at
// text[i]: up to the next delimiter or the end of the text.
func skipToken(text string, i int) int {
	for i++; i < len(text); i++ {
		switch text[i] {
		case ' ', '\t', '\n', '\r', ',', ']', '}', ':':
			return i
		}
	}
	return i
}

// skipComposite returns the offset past the object or array starting at
// text[i], or len(text) when it is cut short.
func skipComposite(text string, i int) int {
	depth := 0
	for ; i < len(text); i++ {
		switch text[i] {
		case '"':
			end, ok := skipString(text, i)
			if !ok {
				return len(text)
			}
			i = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(text)
}

// unquote decodes a whole quoted string: raw itself without its quotes when
// it holds no escape, else a new string. Invalid escapes decode as written;
// unpaired surrogates as U+FFFD, as encoding/json does.
func unquote(raw string) string {
	s := raw[1 : len(raw)-1]
	esc := false
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			esc = true
			break
		}
	}
	if !esc {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b = append(b, c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, n := hex4(s, i+1)
			if n == 0 {
				b = append(b, '\\', 'u')
				continue
			}
			i += n
			if utf16.IsSurrogate(r) {
				r2, n2 := rune(-1), 0
				if i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					r2, n2 = hex4(s, i+3)
				}
				if d := utf16.DecodeRune(r, r2); n2 > 0 && d != utf8.RuneError {
					r, i = d, i+2+n2
				} else {
					r = utf8.RuneError
				}
			}
			b = utf8.AppendRune(b, r)
		default: // \" \\ \/ and anything else as written
			b = append(b, s[i])
		}
	}
	return string(b)
}

// hex4 decodes the four hex digits at s[i:]; n is 4, or 0 when they are not
// there.
func hex4(s string, i int) (r rune, n int) {
	if i+4 > len(s) {
		return 0, 0
	}
	v, err := strconv.ParseUint(s[i:i+4], 16, 32)
	if err != nil {
		return 0, 0
	}
	return rune(v), 4
}
