package jsonscan

// Valid reports whether text is exactly one JSON value (RFC 8259), with
// optional whitespace around it. Bytes of strings are not checked for valid
// UTF-8, as encoding/json does not either.
func Valid(text string) bool {
	i, ok := validValue(text, skipSpace(text, 0), 0)
	return ok && skipSpace(text, i) == len(text)
}

// maxDepth bounds nesting, so that a hostile text cannot exhaust the stack.
const maxDepth = 1000

// validValue checks the value at text[i] and returns the offset past it.
func validValue(text string, i, depth int) (int, bool) {
	if i >= len(text) || depth > maxDepth {
		return i, false
	}
	switch c := text[i]; c {
	case '{', '[':
		return validComposite(text, i, depth+1)
	case '"':
		return validString(text, i)
	case 't':
		return literal(text, i, "true")
	case 'f':
		return literal(text, i, "false")
	case 'n':
		return literal(text, i, "null")
	}
	return validNumber(text, i)
}

func literal(text string, i int, lit string) (int, bool) {
	if len(text)-i >= len(lit) && text[i:i+len(lit)] == lit {
		return i + len(lit), true
	}
	return i, false
}

func validComposite(text string, i, depth int) (int, bool) {
	obj := text[i] == '{'
	closing := byte(']')
	if obj {
		closing = '}'
	}
	i = skipSpace(text, i+1)
	if i < len(text) && text[i] == closing {
		return i + 1, true
	}
	for {
		var ok bool
		if obj {
			if i >= len(text) || text[i] != '"' {
				return i, false
			}
			if i, ok = validString(text, i); !ok {
				return i, false
			}
			i = skipSpace(text, i)
			if i >= len(text) || text[i] != ':' {
				return i, false
			}
			i = skipSpace(text, i+1)
		}
		if i, ok = validValue(text, i, depth); !ok {
			return i, false
		}
		i = skipSpace(text, i)
		if i >= len(text) {
			return i, false
		}
		switch text[i] {
		case ',':
			i = skipSpace(text, i+1)
		case closing:
			return i + 1, true
		default:
			return i, false
		}
	}
}

func validString(text string, i int) (int, bool) {
	for i++; i < len(text); i++ {
		switch c := text[i]; {
		case c < 0x20:
			return i, false
		case c == '"':
			return i + 1, true
		case c == '\\':
			i++
			if i >= len(text) {
				return i, false
			}
			switch text[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 1; k <= 4; k++ {
					if i+k >= len(text) || !isHex(text[i+k]) {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// validNumber: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(text string, i int) (int, bool) {
	if i < len(text) && text[i] == '-' {
		i++
	}
	switch {
	case i >= len(text):
		return i, false
	case text[i] == '0':
		i++
	case text[i] >= '1' && text[i] <= '9':
		i = digits(text, i)
	default:
		return i, false
	}
	if i < len(text) && text[i] == '.' {
		j := digits(text, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(text) && (text[i] == 'e' || text[i] == 'E') {
		i++
		if i < len(text) && (text[i] == '+' || text[i] == '-') {
			i++
		}
		j := digits(text, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits(text string, i int) int {
	for i < len(text) && text[i] >= '0' && text[i] <= '9' {
		i++
	}
	return i
}
