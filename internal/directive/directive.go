// Package directive is the grammar of the //r4c: comments from which r4cgen writes resilient
// wrappers (docs/codegen.md), shared by the generator and the library:
//
//	//r4c:adaptivelimit name=orders initialLimit=10 maxLimit=100 window=500ms
//	//r4c:timeout 2s
//
// The values are checked against the library's settings, so the library provides Parse when it
// is initialised: a program that uses this package imports github.com/resilience4cata/r4c too.
package directive

// Prefix starts every directive comment.
const Prefix = "//r4c:"

// Directive is a parsed //r4c: comment.
type Directive struct {
	// Policy is the policy word as written after the prefix: "adaptivelimit", "timeout", ...
	Policy string
	// Name is the name= attribute: the instance id this policy shares ("" for the method's own).
	Name string
	// Attrs are the other attributes, in order, keyed as in the configuration keys (a lone value
	// is given its main setting's key).
	Attrs []Attr
}

// Attr is one key=value attribute of a directive.
type Attr struct {
	Key, Value string
	Offset     int // byte offset of the attribute in the directive's text
}

// Positioned is implemented by every problem Parse reports: a coded error (r4c.ErrorCode reads
// its code) at a byte offset of the directive's text, so that the generator can report
// file.go:LINE:COL.
type Positioned interface {
	error
	DirectiveOffset() int
}

// Parse parses one directive comment. Every problem is reported, joined, each a Positioned:
// R4C-ATR-002 for an unknown policy or attribute (with the nearest valid one) or a malformed
// value, R4C-ATR-001 for a bad duration, R4C-ATR-003 for a limit below 1, R4C-ATR-009 for
// limits (or alpha and beta) out of order among the attributes given or a window out of range.
// Package r4c sets it when it is initialised.
var Parse func(text string) (Directive, error)

// Config is a policy's directives written as a Go composite literal of its config type, for
// the generator: r4c.AdaptiveLimitConfig{MaxLimit: 100, Window: 500 * time.Millisecond}.
type Config struct {
	Type   string  // the config type: "r4c.AdaptiveLimitConfig"
	Fields []Field // in the order of the config's settings
}

// Field is one field of a Config.
type Field struct {
	Name string // the config's field: "MaxLimit"
	// Expr is the field's Go expression ("100", "500 * time.Millisecond", "r4c.AIMD",
	// "r4c.NoWait"); "" for an error list, whose names are in Errors.
	Expr string
	// Errors are the names of an error list as written ("net.ErrClosed"), for the generator to
	// resolve against the file's imports.
	Errors []string
}

// GoConfig writes the attributes of one policy's directives (merged in order: a later one wins)
// as its config literal. The attributes must have passed Parse. Package r4c sets it when it is
// initialised.
var GoConfig func(policy string, attrs []Attr) (Config, error)
