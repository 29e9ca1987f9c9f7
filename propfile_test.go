package r4c

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The tests of the two file parsers pin every syntax rule to exact entries (key, value and
// line), because a config file that silently parses to something else is worse than one that
// fails: the line numbers end up in every configuration error message.

// props builds the expected entries of a table case: key, value, line, key, value, line, ...
func props(kvl ...any) []property {
	if len(kvl)%3 != 0 {
		panic("props wants key, value, line triples")
	}
	var list []property
	for i := 0; i < len(kvl); i += 3 {
		list = append(list, property{key: kvl[i].(string), value: kvl[i+1].(string), line: kvl[i+2].(int)})
	}
	return list
}

// expectProps fails t unless got is want; nil and empty are the same.
func expectProps(t *testing.T, in string, got, want []property) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("input %q\n got %+v\nwant %+v", in, got, want)
	}
}

// expectParseError fails t unless err is an error naming name and line, holding fragment.
func expectParseError(t *testing.T, in string, got []property, err error, prefix, fragment string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("input %q: got %+v and no error, want an error %q...", in, got, prefix)
	case !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), fragment):
		t.Errorf("input %q: error %q, want the prefix %q and %q in it", in, err, prefix, fragment)
	case got != nil:
		t.Errorf("input %q: got entries %+v with the error", in, got)
	}
}

func TestParseProperties(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []property
	}{
		{"empty file", "", nil},
		{"comments and blank lines only", "# a comment\n! another\n\n   \n\t# indented comment\n\f! after a form feed\n", nil},
		{"comment markers inside a value are content", "a=1 # not a comment\nb=x!y\n", props("a", "1 # not a comment", 1, "b", "x!y", 2)},
		{"equals", "a=1", props("a", "1", 1)},
		{"colon", "a:1", props("a", "1", 1)},
		{"space", "a 1", props("a", "1", 1)},
		{"tab", "a\t1", props("a", "1", 1)},
		{"form feed", "a\f1", props("a", "1", 1)},
		{"whitespace around equals", "a = 1\nb\t=\t2\nc \f= \f3\n", props("a", "1", 1, "b", "2", 2, "c", "3", 3)},
		{"whitespace around colon", "a  :  1", props("a", "1", 1)},
		{"first separator wins", "a=b:c=d", props("a", "b:c=d", 1)},
		{"a second separator is value", "a = = 1\nb::2\nc= :3\nd : =4\n", props("a", "= 1", 1, "b", ":2", 2, "c", ":3", 3, "d", "=4", 4)},
		{"whitespace then a separator is one separator", "a \t: 1", props("a", "1", 1)},
		{"whitespace separator then value with separators", "a b=c", props("a", "b=c", 1)},
		{"key without separator", "flag\nother", props("flag", "", 1, "other", "", 2)},
		{"key with trailing whitespace only", "flag   \t", props("flag", "", 1)},
		{"key with empty value", "a=\nb:\nc =  ", props("a", "", 1, "b", "", 2, "c", "", 3)},
		{"empty key", "=1\n:2\n", props("", "1", 1, "", "2", 2)},
		{"leading whitespace of a line", "   a=1\n\t\f b=2", props("a", "1", 1, "b", "2", 2)},
		{"trailing whitespace of a value is kept", "a=1  \t", props("a", "1  \t", 1)},
		{"dotted and odd keys", "instances.example.com/shop.OrderClient#Place(context.Context,string).timeout.timeout=2s",
			props("instances.example.com/shop.OrderClient#Place(context.Context,string).timeout.timeout", "2s", 1)},

		{"escaped equals in key", `a\=b=c`, props("a=b", "c", 1)},
		{"escaped colon in key", `a\:b:c`, props("a:b", "c", 1)},
		{"escaped space in key", `a\ b c`, props("a b", "c", 1)},
		{"escaped tab in key", "a\\\tb c", props("a\tb", "c", 1)},
		{"escaped comment markers", "\\#a=1\n\\!b=2", props("#a", "1", 1, "!b", "2", 2)},
		{"escaped backslash before a separator", `a\\=b`, props(`a\`, "b", 1)},
		{"control escapes", `k\t\n\r\f=\t\n\r\f`, props("k\t\n\r\f", "\t\n\r\f", 1)},
		{"backslash escape", `a=C:\\dir\\file`, props("a", `C:\dir\file`, 1)},
		{"any other escaped character is itself", `a=\q\"\'\=\:\#\!\ x`, props("a", `q"'=:#! x`, 1)},
		{"escaped leading space of a value is kept", `a=\  x`, props("a", "  x", 1)},
		{"escaped multi-byte character", `a=\é`, props("a", "é", 1)},
		{"raw UTF-8", "ключ=значение ✓", props("ключ", "значение ✓", 1)},

		{"unicode escapes", `k=\u0041\u00e9\u20AC\u00E9`, props("k", "Aé€é", 1)},
		{"unicode escape in key", `\u0041\u0062c=1`, props("Abc", "1", 1)},
		{"escaped separator by unicode is not a separator", `\u003d\u003a=x`, props("=:", "x", 1)},
		{"unicode surrogate pair", `smile=\uD83D\uDE00`, props("smile", "😀", 1)},
		{"unicode NUL", `a=\u0000`, props("a", "\x00", 1)},
		{"escaped backslash before u is no unicode escape", `a=\\u0041`, props("a", `\u0041`, 1)},

		{"continuation", "a=1,\\\n   2,\\\n\t3\nb=4", props("a", "1,2,3", 1, "b", "4", 4)},
		{"continuation of a key", "ke\\\n   y=v", props("key", "v", 1)},
		{"continuation keeps whitespace before the backslash", "a=x \\\n   y", props("a", "x y", 1)},
		{"continuation line starting with a comment marker is content", "a=1,\\\n  #2,\\\n  !3\nb=4", props("a", "1,#2,!3", 1, "b", "4", 4)},
		{"continuation to a separator", "key\\\n  =value", props("key", "value", 1)},
		{"continuation inside a unicode escape", "a=\\u00\\\n  41", props("a", "A", 1)},
		{"two backslashes do not continue", "a=b\\\\\nc=d", props("a", `b\`, 1, "c", "d", 2)},
		{"three backslashes continue", "a=b\\\\\\\n  c", props("a", `b\c`, 1)},
		{"comment ending in a backslash continues nothing", "# note \\\nk=v", props("k", "v", 2)},
		{"blank line ends a continuation", "a=1\\\n\nb=2", props("a", "1", 1, "b", "2", 3)},
		{"whitespace-only line ends a continuation", "a=1\\\n  \t \nb=2", props("a", "1", 1, "b", "2", 3)},
		{"trailing backslash at EOF", "a=1\\", props("a", "1", 1)},
		{"trailing backslash before the last newline", "a=1\\\n", props("a", "1", 1)},
		{"trailing backslash at EOF on a continued line", "a=1\\\n  2\\", props("a", "12", 1)},
		{"a line holding only a backslash yields nothing", "\\\n\nk=v\n\\", props("k", "v", 3)},
		{"entry after a continued key keeps its own line", "a\\\n\\\n=1\nb=2", props("a", "1", 1, "b", "2", 4)},
		{"key after lines holding only a backslash is on its own line", "  \\\n\\\n  a=1", props("a", "1", 3)},
		{"comment marker after a line holding only a backslash is a key", "\\\n#a=1", props("#a", "1", 2)},

		{"CRLF", "a=1\r\nb=2\r\n", props("a", "1", 1, "b", "2", 2)},
		{"CR", "a=1\rb=2\r", props("a", "1", 1, "b", "2", 2)},
		{"mixed terminators and blank lines", "a=1\r\n\r\nb=2\rc=3\n\n\rd=4", props("a", "1", 1, "b", "2", 3, "c", "3", 4, "d", "4", 7)},
		{"continuation over CRLF", "a=1,\\\r\n  2\r\nb=3", props("a", "1,2", 1, "b", "3", 3)},
		{"continuation over CR", "a=1,\\\r  2\rb=3", props("a", "1,2", 1, "b", "3", 3)},
		{"continuation then CRLF blank line", "a=1\\\r\n\r\nb=2", props("a", "1", 1, "b", "2", 3)},

		{"repeated key appears twice in order", "a=1\nb=2\na=3", props("a", "1", 1, "b", "2", 2, "a", "3", 3)},
		{"realistic file", `# r4c configuration
defaults.adaptiveLimit.maxLimit = 100
defaults.retry.retryOn = r4c.ErrCallTimeout,\
                         billing.ErrOverloaded

! per instance
instances.example.com/shop.OrderClient#Place(context.Context,string).timeout.timeout: 2s
`, props(
			"defaults.adaptiveLimit.maxLimit", "100", 2,
			"defaults.retry.retryOn", "r4c.ErrCallTimeout,billing.ErrOverloaded", 3,
			"instances.example.com/shop.OrderClient#Place(context.Context,string).timeout.timeout", "2s", 7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProperties("app.properties", []byte(tt.in))
			if err != nil {
				t.Fatalf("input %q: %v", tt.in, err)
			}
			expectProps(t, tt.in, got, tt.want)
		})
	}
}

func TestParsePropertiesErrors(t *testing.T) {
	tests := []struct {
		name, in         string
		prefix, fragment string
	}{
		{"bad hex digit", `k=\u12G4`, "app.properties:1: ", "value of \"k\": malformed \\uXXXX escape `\\u12G4`"},
		{"truncated at the end of the value", `k=\u12`, "app.properties:1: ", "value of \"k\": malformed \\uXXXX escape `\\u12`"},
		{"u alone", `k=\u`, "app.properties:1: ", "malformed \\uXXXX escape `\\u`"},
		{"truncated by the separator", `\u12=v`, "app.properties:1: ", "key: malformed \\uXXXX escape `\\u12`"},
		{"bad escape in a key", `\uZZZZ=1`, "app.properties:1: ", "key: malformed \\uXXXX escape `\\uZZZZ`"},
		{"sign is no hex digit", `k=\u+123`, "app.properties:1: ", "malformed"},
		{"after other lines", "a=1\n\n# c\nb=\\u", "app.properties:4: ", `value of "b"`},
		{"on a continuation line", "a=1\\\n  2\\\n  \\u00x", "app.properties:3: ", `value of "a": malformed`},
		{"on the first line of a continued value", "a=\\u00x\\\n  2", "app.properties:1: ", `value of "a": malformed`},
		{"after CRLF lines", "a=1\r\nb=2\r\nc=\\uXYZW\r\n", "app.properties:3: ", `value of "c"`},
		{"lone high surrogate", `k=\uD800`, "app.properties:1: ", "`\\uD800`: unpaired UTF-16 surrogate"},
		{"lone low surrogate", `k=\uDC00\uD800`, "app.properties:1: ", "`\\uDC00`: unpaired UTF-16 surrogate"},
		{"high surrogate before a character", `k=\uD800\u0041`, "app.properties:1: ", "`\\uD800`: unpaired UTF-16 surrogate"},
		{"high surrogate before a bad escape", `k=\uD800\u00`, "app.properties:1: ", "malformed \\uXXXX escape `\\u00`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProperties("app.properties", []byte(tt.in))
			expectParseError(t, tt.in, got, err, tt.prefix, tt.fragment)
		})
	}
}

func TestFlattenJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []property
	}{
		{"empty object", "{}", nil},
		{"empty nested objects", `{"a": {"b": {}}}`, nil},
		{"nesting", `{
  "defaults": {
    "adaptiveLimit": {
      "maxLimit": 100,
      "minLimit": 2
    },
    "bulkhead": {"maxConcurrent": 10}
  },
  "top": "x"
}`, props(
			"defaults.adaptiveLimit.maxLimit", "100", 4,
			"defaults.adaptiveLimit.minLimit", "2", 5,
			"defaults.bulkhead.maxConcurrent", "10", 7,
			"top", "x", 9)},
		{"numbers kept as written", `{"a": 0.8, "b": 100, "c": 1e3, "d": -0, "e": 1E+3, "f": 0.10, "g": 12345678901234567890123, "h": -2.5e-3}`,
			props("a", "0.8", 1, "b", "100", 1, "c", "1e3", 1, "d", "-0", 1, "e", "1E+3", 1, "f", "0.10", 1, "g", "12345678901234567890123", 1, "h", "-2.5e-3", 1)},
		{"booleans", `{"on": true, "off": false}`, props("on", "true", 1, "off", "false", 1)},
		{"strings as is", `{"a": "2s", "b": "", "c": " spaced ", "d": "tab\tnew\nline \u00e9 \"q\" \\"}`,
			props("a", "2s", 1, "b", "", 1, "c", " spaced ", 1, "d", "tab\tnew\nline é \"q\" \\", 1)},
		{"string that looks like a number stays a string", `{"a": "0.80"}`, props("a", "0.80", 1)},
		{"array of error names", `{"retry": {"retryOn": ["r4c.ErrCallTimeout", "billing.ErrOverloaded"]}}`,
			props("retry.retryOn", "r4c.ErrCallTimeout,billing.ErrOverloaded", 1)},
		{"array of mixed scalars", `{"a": [1, true, "x", 0.5, false]}`, props("a", "1,true,x,0.5,false", 1)},
		{"empty array", `{"a": []}`, props("a", "", 1)},
		{"array over lines has the key's line", "{\n  \"a\": [\n    \"x\",\n    \"y\"\n  ],\n  \"b\": 1\n}", props("a", "x,y", 2, "b", "1", 6)},
		{"dotted instance id stays whole", `{"instances": {"example.com/shop.OrderClient#Place(context.Context,string)": {"timeout": {"timeout": "2s"}}}}`,
			props("instances.example.com/shop.OrderClient#Place(context.Context,string).timeout.timeout", "2s", 1)},
		{"odd ids", `{"instances": {"a b": {"x": 1}, "ünï": {"y": 2}, "=:#!\\\"": {"z": 3}}}`,
			props("instances.a b.x", "1", 1, "instances.ünï.y", "2", 1, "instances.=:#!\\\".z", "3", 1)},
		{"key with an escaped dot and unicode escape", `{"a\u002eb": {"\u00e9": 1}}`, props("a.b.é", "1", 1)},
		{"empty keys", `{"": 1, "a": {"": 2}, "b": {"": {"c": 3}}}`, props("", "1", 1, "a.", "2", 1, "b..c", "3", 1)},
		{"duplicate keys both returned in order", `{"a": 1, "b": {"c": 2}, "a": 3, "b": {"c": 4}}`,
			props("a", "1", 1, "b.c", "2", 1, "a", "3", 1, "b.c", "4", 1)},
		{"key on the line after the brace", "{\n\n   \"a\"\n   :\n   1}", props("a", "1", 3)},
		{"escaped newlines in strings are no line breaks", "{\"a\": \"x\\ny\\nz\",\n\"b\": 1}", props("a", "x\ny\nz", 1, "b", "1", 2)},
		{"CRLF", "{\r\n  \"a\": 1,\r\n  \"b\": {\r\n    \"c\": 2\r\n  }\r\n}\r\n", props("a", "1", 2, "b.c", "2", 4)},
		{"CR", "{\r\"a\": 1,\r\r\"b\": 2}", props("a", "1", 2, "b", "2", 4)},
		{"whitespace around the document", " \t\n{\"a\": 1}\n\n", props("a", "1", 2)},
		{"invalid UTF-8 in a string is replaced", "{\"a\": \"\xff\"}", props("a", "\uFFFD", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := flattenJSON("app.json", []byte(tt.in))
			if err != nil {
				t.Fatalf("input %q: %v", tt.in, err)
			}
			expectProps(t, tt.in, got, tt.want)
		})
	}
}

func TestFlattenJSONErrors(t *testing.T) {
	tests := []struct {
		name, in         string
		prefix, fragment string
	}{
		{"empty file", "", "app.json:1: ", "empty file: want a JSON object"},
		{"whitespace only", " \n\t\n", "app.json:1: ", "empty file"},
		{"top-level array", "\n[1, 2]", "app.json:2: ", "the top level must be a JSON object, found an array"},
		{"top-level string", `"a"`, "app.json:1: ", "found a string"},
		{"top-level number", `42`, "app.json:1: ", "found a number"},
		{"top-level boolean", `true`, "app.json:1: ", "found a boolean"},
		{"top-level null", `null`, "app.json:1: ", "found null"},
		{"null leaf", "{\n  \"a\": {\n    \"b\": null\n  }\n}", "app.json:3: ", `"a.b": want a string, number, boolean or array of them, found null`},
		{"nested array", "{\n  \"a\": [\n    \"x\",\n    [1]\n  ]\n}", "app.json:4: ", `"a": an array may hold only strings, numbers and booleans, found an array`},
		{"object in an array", "{\"a\": [\n{\"b\": 1}]}", "app.json:2: ", `"a": an array may hold only strings, numbers and booleans, found an object`},
		{"null in an array", "{\"a\": [1,\n null]}", "app.json:2: ", "found null"},
		{"missing comma", "{\"a\": 1\n \"b\": 2}", "app.json:2: ", "invalid JSON: invalid character '\"' after object key:value pair"},
		{"trailing comma", "{\"a\": 1,\n}", "app.json:2: ", "invalid JSON: invalid character '}' looking for beginning of object key string"},
		{"missing colon", "{\"a\"\n 1}", "app.json:2: ", "invalid JSON: invalid character '1' after object key"},
		{"unquoted key", "{\n a: 1}", "app.json:2: ", "invalid JSON: invalid character 'a'"},
		{"single quotes", "{'a': 1}", "app.json:1: ", "invalid JSON: invalid character '\\''"},
		{"comment", "{\n// no comments in JSON\n\"a\": 1}", "app.json:2: ", "invalid JSON: invalid character '/'"},
		{"unterminated object", "{\n\"a\": 1\n\n", "app.json:2: ", "unexpected end of JSON input"},
		{"unterminated nested object", "{\"a\": {\n\"b\": 1}", "app.json:2: ", "unexpected end of JSON input"},
		{"unterminated array", "{\"a\": [1,", "app.json:1: ", "unexpected end of JSON input"},
		{"unterminated string", "{\"a\": \"x", "app.json:1: ", "unexpected end of JSON input"},
		{"raw newline in a string", "{\"a\": \"x\ny\"}", "app.json:1: ", "invalid JSON: invalid character '\\n' in string literal"},
		{"bad string escape", "{\n\"a\": \"\\q\"}", "app.json:2: ", "invalid JSON: invalid character 'q' in string escape code"},
		{"bad literal", "{\"a\":\n tru}", "app.json:2: ", "invalid JSON: invalid character '}' in literal true"},
		{"leading zero", "{\"a\": 01}", "app.json:1: ", "invalid JSON: invalid character '1'"},
		{"NaN", "{\"a\": NaN}", "app.json:1: ", "invalid JSON: invalid character 'N'"},
		{"byte order mark", "\xef\xbb\xbf{\"a\": 1}", "app.json:1: ", "invalid JSON: invalid character 'ï'"},
		{"second document", "{\"a\": 1}\n{\"b\": 2}", "app.json:2: ", "unexpected data after the top-level object"},
		{"trailing garbage", "{\"a\": 1}\r\n\r\nx", "app.json:3: ", "unexpected data after the top-level object"},
		{"error after CRLF lines", "{\r\n\"a\": 1,\r\n\"b\": null}", "app.json:3: ", `"b": want`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := flattenJSON("app.json", []byte(tt.in))
			expectParseError(t, tt.in, got, err, tt.prefix, tt.fragment)
		})
	}
}

// propertiesSeeds are the in-code seeds of FuzzParseProperties; testdata/fuzz holds more.
var propertiesSeeds = []string{
	"",
	"a=1\nb:2\nc 3\n",
	"# comment\n! comment\n\n  key  =  value  \n",
	"a=1,\\\n   2,\\\r\n\t3\rb=4",
	`k\=\:\ \#\!\\\t\n\r\f\q=\u0041\uD83D\uDE00\u20ac`,
	"a=\\u12G4",
	"a=\\uD800",
	"\\\n\n\\",
	"a=b\\\\\\\n  c\\",
	"ключ=значение\xff\xfe",
}

// FuzzParseProperties checks that parseProperties never panics and that what it returns is
// consistent: errors name the file and a line of it; entries sit on lines that hold a key;
// line terminators are interchangeable; and entries written back out, escaped as a
// .properties writer must, parse to the same keys and values.
func FuzzParseProperties(f *testing.F) {
	for _, s := range propertiesSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := physicalLines(data)
		got, err := parseProperties("f.properties", data)
		if err != nil {
			checkErrorLine(t, data, err, "f.properties", len(lines))
			if got != nil {
				t.Fatalf("entries %+v with the error %v", got, err)
			}
		}
		prev := 1
		for _, p := range got {
			if p.line < prev || p.line > len(lines) {
				t.Fatalf("%+v: line out of order or past the %d lines", p, len(lines))
			}
			prev = p.line
			// The key's line is not blank, and not a comment unless it continues a line.
			first := strings.TrimLeft(lines[p.line-1], " \t\f")
			continued := p.line > 1 && trailingBackslashes([]byte(lines[p.line-2]))%2 == 1
			if first == "" || (first[0] == '#' || first[0] == '!') && !continued {
				t.Fatalf("%+v: line %d %q holds no key", p, p.line, lines[p.line-1])
			}
		}

		// \r\n, \r and \n end lines alike, so normalising them changes nothing, lines included.
		lf := bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
		gotLF, errLF := parseProperties("f.properties", lf)
		if fmt.Sprint(errLF) != fmt.Sprint(err) || !slices.Equal(gotLF, got) {
			t.Fatalf("with \\n line ends: %+v, %v\nas read: %+v, %v", gotLF, errLF, got, err)
		}

		if err != nil {
			return
		}
		var out strings.Builder
		for _, p := range got {
			out.WriteString(escapeProperty(p.key) + "=" + escapeProperty(p.value) + "\n")
		}
		again, err := parseProperties("f.properties", []byte(out.String()))
		if err != nil {
			t.Fatalf("written back as %q: %v", out.String(), err)
		}
		if len(again) != len(got) {
			t.Fatalf("written back as %q: %d entries, want %d", out.String(), len(again), len(got))
		}
		for i, p := range again {
			if p.key != got[i].key || p.value != got[i].value || p.line != i+1 {
				t.Fatalf("written back as %q: entry %d is %+v, want %+v on line %d", out.String(), i, p, got[i], i+1)
			}
		}
	})
}

// escapeProperty writes s so that parseProperties reads it back as s, as a key or a value:
// every byte that means something to the syntax is escaped; the rest (UTF-8 or not) is raw.
func escapeProperty(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '=', ':', ' ', '#', '!':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// physicalLines splits data at \r\n, \r and \n; line n of the file is element n-1.
func physicalLines(data []byte) []string {
	s := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
	return strings.Split(s, "\n")
}

var errorLine = regexp.MustCompile(`^([^:]+):([0-9]+): `)

// checkErrorLine fails t unless err starts with "<name>:<line>: " for a line of the file.
func checkErrorLine(t *testing.T, data []byte, err error, name string, lines int) {
	t.Helper()
	m := errorLine.FindStringSubmatch(err.Error())
	if m == nil || m[1] != name {
		t.Fatalf("input %q: error %q does not start with %q", data, err, name+":<line>: ")
	}
	if n, _ := strconv.Atoi(m[2]); n < 1 || n > lines {
		t.Fatalf("input %q: error %q names line %d of %d", data, err, n, lines)
	}
}

// jsonSeeds are the in-code seeds of FuzzFlattenJSON; testdata/fuzz holds more.
var jsonSeeds = []string{
	"",
	"{}",
	`{"defaults": {"adaptiveLimit": {"maxLimit": 100, "ratio": 0.8, "big": 1e3}}}`,
	`{"retry": {"retryOn": ["r4c.ErrCallTimeout", "billing.ErrOverloaded"], "on": true}}`,
	"{\r\n\"instances\": {\"example.com/shop.OrderClient#Place(context.Context,string)\": {\"timeout\": {\"timeout\": \"2s\"}}}\r}",
	`{"": {"": ""}, "a": "x\ny", "b": "\u000A"}`,
	`{"a": null}`,
	`{"a": [[1], {"b": 2}]}`,
	`[1, 2]`,
	`{"a": 1} {"b": 2}`,
	"{\"a\": \"\xff\"",
}

// FuzzFlattenJSON checks that flattenJSON never panics and that what it returns is consistent:
// errors name the file and a line of it; it accepts only valid JSON, and rejects valid JSON only
// for what it does not support; an empty key or a newline in a value needs the input to have
// written one; lines are in file order; and the same document without its whitespace flattens
// to the same entries, all on line 1.
func FuzzFlattenJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := len(physicalLines(data))
		got, err := flattenJSON("f.json", data)
		if err != nil {
			checkErrorLine(t, data, err, "f.json", lines)
			if got != nil {
				t.Fatalf("entries %+v with the error %v", got, err)
			}
			if json.Valid(data) && (strings.Contains(err.Error(), "invalid JSON") ||
				strings.Contains(err.Error(), "unexpected end") || strings.Contains(err.Error(), "unexpected data")) {
				t.Fatalf("input %q is valid JSON, but: %v", data, err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("input %q is not valid JSON, but it flattened to %+v", data, got)
		}
		prev := 1
		for _, p := range got {
			if p.key == "" && !bytes.Contains(data, []byte(`""`)) {
				t.Fatalf("input %q: empty key in %+v, but no empty key in the input", data, p)
			}
			if strings.Contains(p.value, "\n") && !bytes.Contains(data, []byte(`\n`)) &&
				!bytes.Contains(bytes.ToLower(data), []byte(`\u000a`)) {
				t.Fatalf("input %q: newline in %+v, but no string in the input holds one", data, p)
			}
			if p.line < prev || p.line > lines {
				t.Fatalf("input %q: %+v: line out of order or past the %d lines", data, p, lines)
			}
			prev = p.line
		}

		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Fatalf("input %q: compact: %v", data, err)
		}
		flat, err := flattenJSON("f.json", compact.Bytes())
		if err != nil {
			t.Fatalf("compacted to %q: %v", compact.Bytes(), err)
		}
		if len(flat) != len(got) {
			t.Fatalf("compacted to %q: %+v, want the entries of %+v", compact.Bytes(), flat, got)
		}
		for i, p := range flat {
			if p.key != got[i].key || p.value != got[i].value || p.line != 1 {
				t.Fatalf("compacted to %q: entry %d is %+v, want %+v on line 1", compact.Bytes(), i, p, got[i])
			}
		}
	})
}
