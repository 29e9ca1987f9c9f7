package r4c

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
)

// This file holds the two file parsers behind WithPropertiesFile and WithJSONFile. Both reduce
// their format to the same thing, a list of flat key/value entries with the line each came from,
// so that everything after parsing (key lookup, value validation, "did you mean" messages) is
// shared by every source and every message can point at "file:line".

// property is one flat configuration entry read from a source.
//
// Entries are kept as a list, not a map, so that a source's order survives (a later line wins
// over an earlier one for the same key, as with java.util.Properties) and so that each entry
// keeps the line it was read from for error messages.
type property struct {
	key, value string
	line       int // 1-based line of the key in its file; 0 when the source has no lines
}

// parseProperties reads Java-style .properties text (what java.util.Properties.load accepts):
// lines; comments starting with '#' or '!' (after optional leading whitespace); blank lines;
// a key and value separated by '=', ':' or whitespace (the first unescaped one; whitespace
// around the separator is skipped; a key with no separator has an empty value); leading
// whitespace of a line is ignored; a line ending in an odd number of backslashes continues on
// the next line (the next line's leading whitespace is dropped); escapes in keys and values:
// \t \n \r \f \\ \uXXXX, and a backslash before any other character yields that character
// (so "\=", "\:", "\ ", "\#" work). Line terminators \n, \r\n and \r. Entries are returned in
// file order (a repeated key appears twice; the caller decides that the later one wins).
// Errors (a malformed \uXXXX escape) name the file and line: "<name>:<line>: ...".
//
// The format is Java's because the settings mirror resilience4j's, whose users already keep
// them in .properties files; following Properties.load closely means such a file means the same
// thing here. Whitespace is ' ', '\t' and '\f', as in Java. Where this differs from Java, it is
// on purpose:
//
//   - The input is UTF-8 (Properties.load(InputStream) reads ISO-8859-1, but UTF-8 is what Go
//     programs and modern editors write; Java's own ResourceBundles read UTF-8 since Java 9).
//     Bytes are not validated: every syntax character is ASCII, so the parser works on bytes
//     and multi-byte sequences pass through unchanged.
//   - \uXXXX escapes are UTF-16 code units, as in Java, so a surrogate pair (\uD83D\uDE00)
//     decodes to one character; an unpaired surrogate is an error, because a Go string cannot
//     hold one and silently replacing it would change a key without a word.
//   - A logical line that is empty once its continuation backslashes are removed (a line
//     holding only "\") yields no entry, like a blank line; Java versions disagree on it.
//   - '#' and '!' start a comment only on the first line of a logical line: a continued line
//     is content ("a=1,\" then "#2" is the value "1,#2"), as in Java 8.
func parseProperties(name string, data []byte) ([]property, error) {
	var (
		props   []property
		logical []byte        // the logical line being assembled, escapes still raw
		segs    []propSegment // where each physical line starts in logical, for error lines
		open    bool          // the previous physical line ended in a continuation backslash
	)
	flush := func() error {
		p, ok, err := propertyFromLine(name, logical, segs)
		if ok {
			props = append(props, p)
		}
		return err
	}
	line := 0
	for rest := data; len(rest) > 0; {
		var text []byte
		text, rest = cutPropertyLine(rest)
		line++
		content := bytes.TrimLeft(text, " \t\f")
		if !open {
			if len(content) == 0 || content[0] == '#' || content[0] == '!' {
				continue // blank line or comment; a comment's trailing backslash continues nothing
			}
			logical, segs = logical[:0], segs[:0]
		} else if len(content) == 0 {
			// A blank (or whitespace-only) line ends a continued line, as in Java.
			open = false
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		segs = append(segs, propSegment{at: len(logical), line: line})
		logical = append(logical, content...)
		if trailingBackslashes(content)%2 == 1 {
			logical = logical[:len(logical)-1] // the continuation backslash is not content
			open = true
			continue
		}
		open = false
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if open { // a continuation backslash at the end of the file continues onto nothing
		if err := flush(); err != nil {
			return nil, err
		}
	}
	return props, nil
}

// propSegment records that the physical line numbered line starts at byte at of a logical
// line, so that an error found after the lines are joined still names the line it is on.
type propSegment struct {
	at, line int
}

// cutPropertyLine splits off the first physical line of data, without its terminator (\n, \r\n
// or \r), and returns it with the rest of data.
func cutPropertyLine(data []byte) (line, rest []byte) {
	i := bytes.IndexAny(data, "\r\n")
	if i < 0 {
		return data, nil
	}
	if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
		return data[:i], data[i+2:]
	}
	return data[:i], data[i+1:]
}

// trailingBackslashes counts the backslashes that end b: an odd count means the last one is
// not itself escaped, so it continues the line.
func trailingBackslashes(b []byte) int {
	n := 0
	for n < len(b) && b[len(b)-1-n] == '\\' {
		n++
	}
	return n
}

// isPropertySpace reports whether c is whitespace to the .properties format (Java's set: no
// vertical tab, and line terminators never reach the key/value split).
func isPropertySpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\f'
}

// propertyFromLine splits a logical line into its key and value and decodes their escapes. ok
// is false for a line that turned out empty (only continuation backslashes).
func propertyFromLine(name string, logical []byte, segs []propSegment) (p property, ok bool, err error) {
	if len(logical) == 0 {
		return property{}, false, nil
	}
	keyEnd, valueStart := splitPropertyLine(logical)
	key, at, msg := unescapeProperty(logical[:keyEnd])
	if msg != "" {
		return property{}, false, fmt.Errorf("%s:%d: key: %s", name, segmentLine(segs, at), msg)
	}
	value, at, msg := unescapeProperty(logical[valueStart:])
	if msg != "" {
		return property{}, false, fmt.Errorf("%s:%d: value of %q: %s", name, segmentLine(segs, valueStart+at), key, msg)
	}
	// The key's line is where its first byte is: the logical line's first line, unless that
	// held only a continuation backslash.
	return property{key: key, value: value, line: segmentLine(segs, 0)}, true, nil
}

// segmentLine returns the physical line holding byte at of a logical line. When several
// segments start at the same byte (lines that held only a continuation backslash), the byte is
// on the last of them.
func segmentLine(segs []propSegment, at int) int {
	line := segs[0].line
	for _, s := range segs {
		if s.at > at {
			break
		}
		line = s.line
	}
	return line
}

// splitPropertyLine finds where the key of a logical line ends and its value starts, exactly as
// Properties.load does: the key runs to the first unescaped '=', ':' or whitespace; then
// whitespace, at most one '=' or ':' (unless the key already ended at one), and whitespace
// again are skipped. So "k = v", "k:v", "k v" and "k  :  v" all give key "k" and value "v",
// while "k = = v" gives the value "= v".
func splitPropertyLine(line []byte) (keyEnd, valueStart int) {
	keyEnd, valueStart = len(line), len(line)
	sep, escaped := false, false
	for i, c := range line {
		if !escaped && (c == '=' || c == ':') {
			keyEnd, valueStart, sep = i, i+1, true
			break
		}
		if !escaped && isPropertySpace(c) {
			keyEnd, valueStart = i, i+1
			break
		}
		escaped = c == '\\' && !escaped
	}
	for ; valueStart < len(line); valueStart++ {
		c := line[valueStart]
		if isPropertySpace(c) {
			continue
		}
		if sep || (c != '=' && c != ':') {
			break
		}
		sep = true
	}
	return keyEnd, valueStart
}

// unescapeProperty decodes the escapes of a key or a value. On a malformed \uXXXX escape it
// returns msg describing it and at, the offset of its backslash in s.
func unescapeProperty(s []byte) (out string, at int, msg string) {
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s), 0, ""
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(s) {
			// Unreachable from parseProperties (an odd trailing backslash is a continuation and
			// is removed); dropping it is what that removal would have done.
			break
		}
		i++
		switch c = s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, n, bad, msg := unicodeEscape(s, i-1)
			if msg != "" {
				return "", bad, msg
			}
			b.WriteRune(r)
			i += n - 2 // the loop's i++ steps past the escape's last byte
		default:
			b.WriteByte(c) // "\=", "\:", "\ ", "\#", "\\", and any other character as itself
		}
	}
	return b.String(), 0, ""
}

// unicodeEscape decodes the \uXXXX escape at s[at:] (and the low surrogate escape following
// it, when the first is a high surrogate). It returns the character and the number of bytes
// the escape(s) took, or msg and the offset bad of the escape at fault.
func unicodeEscape(s []byte, at int) (r rune, n, bad int, msg string) {
	hi, ok := hex4(s[at+2:])
	if !ok {
		return 0, 0, at, malformedEscape(s, at)
	}
	switch {
	case !utf16.IsSurrogate(hi):
		return hi, 6, 0, ""
	case hi >= 0xDC00: // a low surrogate with no high one before it
		return 0, 0, at, malformedEscape(s, at) + ": unpaired UTF-16 surrogate"
	}
	next := at + 6
	if !bytes.HasPrefix(s[next:], []byte(`\u`)) {
		return 0, 0, at, malformedEscape(s, at) + ": unpaired UTF-16 surrogate"
	}
	lo, ok := hex4(s[next+2:])
	if !ok {
		return 0, 0, next, malformedEscape(s, next)
	}
	r = utf16.DecodeRune(hi, lo)
	if r == '\uFFFD' {
		return 0, 0, at, malformedEscape(s, at) + ": unpaired UTF-16 surrogate"
	}
	return r, 12, 0, ""
}

// hex4 decodes the four hexadecimal digits that start s (Java accepts exactly these: no signs,
// no other digits).
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// malformedEscape describes the escape at s[at:], quoting what was written (up to the six
// bytes a \uXXXX escape takes) so the reader sees what is wrong with it. %#q quotes with
// backquotes when it can, so the backslash shows once: `\u12G4`, not "\\u12G4".
func malformedEscape(s []byte, at int) string {
	end := min(at+6, len(s))
	return fmt.Sprintf(`malformed \uXXXX escape %#q`, s[at:end])
}

// flattenJSON reads a JSON object whose nested objects flatten to dotted keys:
// {"defaults": {"adaptiveLimit": {"maxLimit": 100}}} -> key "defaults.adaptiveLimit.maxLimit",
// value "100". Leaves may be strings (value as is), numbers (their JSON text as written, e.g.
// "0.8", "100", "1e3"), booleans ("true"/"false"), or arrays of strings/numbers/booleans, which
// join with "," (for error lists: ["r4c.ErrCallTimeout", "billing.ErrOverloaded"] ->
// "r4c.ErrCallTimeout,billing.ErrOverloaded"). A key may itself contain dots
// ({"instances": {"example.com/shop.OrderClient#Place(context.Context,string)": {...}}} keeps
// the id whole: the flattened key is just the path joined with dots). null leaves, nested
// arrays and objects inside arrays are errors. The top level must be an object. Every property
// carries the 1-based line where its key appears in the file (use json.Decoder with Token()
// and InputOffset() to track positions). Errors name the file and line: "<name>:<line>: ...".
// Duplicate keys: both are returned in order.
//
// Flattening to the same entries as the other sources means the JSON file needs no
// validation of its own: every key and value then goes through the same checks as a
// .properties line. Numbers are kept as written (json.Decoder.UseNumber) rather than going
// through float64, so "100" does not turn into "1e+02" and a duration such as 1.5 keeps its
// text. An empty object contributes no entries. Objects may nest maxJSONDepth levels deep
// (a key needs 4 at most), and the walk is iterative: nesting never costs stack. Lines end at \n, \r\n or a lone \r, as in parseProperties.
// maxJSONDepth bounds the nesting of a JSON configuration file (the top-level object counts):
// a hostile file must not cost memory without bound.
const maxJSONDepth = 16

func flattenJSON(name string, data []byte) ([]property, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	lines := jsonLines{data: data}
	fail := func(off int64, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", name, lines.at(off), fmt.Sprintf(format, args...))
	}
	// syntax reports an error from the decoder. On a syntax error InputOffset is where the
	// token at fault starts (SyntaxError.Offset counts only the bytes Decode scanned, so it is
	// not a position in the file when Token is used); a file that stops early is at fault on
	// its last line that is not blank.
	syntax := func(err error) error {
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			return fail(int64(len(bytes.TrimRight(data, " \t\r\n"))), "unexpected end of JSON input")
		}
		return fail(dec.InputOffset(), "invalid JSON: %v", err)
	}

	tok, err := dec.Token()
	if err == io.EOF {
		return nil, fail(0, "empty file: want a JSON object")
	}
	if err != nil {
		return nil, syntax(err)
	}
	if tok != json.Delim('{') {
		return nil, fail(dec.InputOffset(), "the top level must be a JSON object, found %s", jsonKind(tok))
	}

	var props []property
	var path []string // keys of the objects open below the top level
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntax(err)
		}
		if tok == json.Delim('}') {
			if len(path) == 0 {
				break // the top-level object is closed
			}
			path = path[:len(path)-1]
			continue
		}
		key, ok := tok.(string)
		if !ok { // unreachable: the decoder only returns a key string or '}' here
			return nil, fail(dec.InputOffset(), "want an object key, found %s", jsonKind(tok))
		}
		// A JSON string cannot span lines, so the line where the key ends is the key's line.
		line := lines.at(dec.InputOffset())

		tok, err = dec.Token()
		if err != nil {
			return nil, syntax(err)
		}
		if tok == json.Delim('{') {
			if len(path)+1 >= maxJSONDepth {
				return nil, fail(dec.InputOffset(), "%q: objects nested deeper than %d levels (a key has at most 4: instances.<id>.<policy>.<key>)", joinJSONKey(path, key), maxJSONDepth)
			}
			path = append(path, key)
			continue
		}
		// Joined only for leaves: joining at every level would make deep nesting cost the
		// square of its depth.
		p := property{key: joinJSONKey(path, key), line: line}
		switch tok {
		case json.Delim('['):
			var elems []string
			for {
				tok, err := dec.Token()
				if err != nil {
					return nil, syntax(err)
				}
				if tok == json.Delim(']') {
					break
				}
				s, ok := jsonScalar(tok)
				if !ok {
					return nil, fail(dec.InputOffset(), "%q: an array may hold only strings, numbers and booleans, found %s", p.key, jsonKind(tok))
				}
				elems = append(elems, s)
			}
			p.value = strings.Join(elems, ",")
		default:
			s, ok := jsonScalar(tok)
			if !ok {
				return nil, fail(dec.InputOffset(), "%q: want a string, number, boolean or array of them, found %s", p.key, jsonKind(tok))
			}
			p.value = s
		}
		props = append(props, p)
	}

	if _, err := dec.Token(); err != io.EOF {
		return nil, fail(dec.InputOffset(), "unexpected data after the top-level object")
	}
	return props, nil
}

// joinJSONKey joins the path of enclosing keys and a key with dots. Nothing is escaped: a key
// holding dots (an instance id such as "example.com/shop.OrderClient#Place") stays whole, and
// the flat-key parser, which knows the key layout, sorts out which dots separate levels.
func joinJSONKey(path []string, key string) string {
	if len(path) == 0 {
		return key
	}
	return strings.Join(path, ".") + "." + key
}

// jsonScalar returns the flat value of a string, number or boolean token; ok is false for
// anything else (null, or the start of an array or object).
func jsonScalar(tok json.Token) (s string, ok bool) {
	switch v := tok.(type) {
	case string:
		return v, true
	case json.Number:
		return string(v), true
	case bool:
		if v {
			return "true", true
		}
		return "false", true
	}
	return "", false
}

// jsonKind names what a token starts, for error messages.
func jsonKind(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return fmt.Sprintf("%q", rune(v))
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

// jsonLines turns byte offsets into 1-based line numbers. The decoder's offsets only grow, so
// it counts line terminators incrementally instead of rescanning the file for every key.
type jsonLines struct {
	data  []byte
	off   int // bytes counted so far
	ended int // line terminators in data[:off]
}

// at returns the line holding byte offset off (the line a token ending at off is on). A \r
// that a \n follows ends no line by itself, so \r\n counts once.
func (l *jsonLines) at(off int64) int {
	end := int(min(max(off, 0), int64(len(l.data))))
	if end < l.off {
		l.off, l.ended = 0, 0
	}
	for ; l.off < end; l.off++ {
		switch l.data[l.off] {
		case '\n':
			l.ended++
		case '\r':
			if l.off+1 == len(l.data) || l.data[l.off+1] != '\n' {
				l.ended++
			}
		}
	}
	return l.ended + 1
}
