package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// NodeKind is the kind of a [Node].
type NodeKind uint8

// The kinds of nodes.
const (
	Null NodeKind = iota
	Object
	Array
	String
	Number
	Bool
)

func (k NodeKind) String() string {
	switch k {
	case Object:
		return "an object"
	case Array:
		return "a list"
	case String:
		return "a string"
	case Number:
		return "a number"
	case Bool:
		return "a boolean"
	}
	return "null"
}

// Node is one value of a policy document as a [Decoder] read it, with the
// line it starts on, so that an error can name the place. A decoder for
// another format (package adapters/policyyaml reads YAML) makes the same
// tree.
type Node struct {
	Kind NodeKind
	Line int    // 1-based; 0 when unknown
	Text string // a scalar's text: a string's value, a number's literal, "true" or "false"
	// Keys and Values are an object's members, in the document's order;
	// Items are a list's elements.
	Keys   []string
	Values []*Node
	Items  []*Node
}

// Decoder reads a policy document into a tree of nodes. It reports
// malformed input with an [*Error] carrying the line when it knows it.
// It must refuse an object that names one key twice.
type Decoder func(data []byte) (*Node, error)

// The bounds of a document; a decoder for another format keeps them too
// (see [CheckBounds]).
const (
	// MaxFileSize is the largest policy file read, in bytes.
	MaxFileSize = 1 << 20
	// MaxDepth is how deeply values may nest.
	MaxDepth = 16
	// MaxNodes is how many values one document may hold.
	MaxNodes = 100_000
)

// JSON decodes a JSON policy document. Numbers are kept as written; an
// object naming one key twice, trailing data, and more than [MaxDepth]
// levels or [MaxNodes] values are refused.
func JSON(data []byte) (*Node, error) {
	d := &jsonReader{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	d.dec.UseNumber()
	n, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); err != io.EOF {
		return nil, &Error{Line: d.line(), Reason: "data after the document"}
	}
	return n, nil
}

type jsonReader struct {
	dec   *json.Decoder
	data  []byte
	nodes int
	// lines caches the line of the last offset asked, to count forward.
	at, atLine int
}

// line returns the line of the decoder's offset.
func (d *jsonReader) line() int {
	off := int(d.dec.InputOffset())
	if off < d.at {
		d.at, d.atLine = 0, 1
	}
	if d.atLine == 0 {
		d.atLine = 1
	}
	d.atLine += bytes.Count(d.data[d.at:off], []byte{'\n'})
	d.at = off
	return d.atLine
}

// startLine returns the line where the next token starts: past the
// whitespace after the offset (and a ':' or ',').
func (d *jsonReader) startLine() int {
	line := d.line()
	for _, c := range d.data[d.at:] {
		switch c {
		case '\n':
			line++
		case ' ', '\t', '\r', ':', ',':
		default:
			return line
		}
	}
	return line
}

func (d *jsonReader) value(depth int) (*Node, error) {
	if depth > MaxDepth {
		return nil, &Error{Line: d.startLine(), Reason: fmt.Sprintf("values nest deeper than %d levels", MaxDepth)}
	}
	if d.nodes++; d.nodes > MaxNodes {
		return nil, &Error{Line: d.startLine(), Reason: fmt.Sprintf("more than %d values", MaxNodes)}
	}
	line := d.startLine()
	tok, err := d.dec.Token()
	if err != nil {
		return nil, d.syntax(err)
	}
	n := &Node{Line: line}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n.Kind = Object
			seen := map[string]bool{}
			for d.dec.More() {
				kline := d.startLine()
				kt, err := d.dec.Token()
				if err != nil {
					return nil, d.syntax(err)
				}
				key, _ := kt.(string)
				if seen[key] {
					return nil, &Error{Line: kline, Field: key, Reason: "the key is given twice"}
				}
				seen[key] = true
				v, err := d.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.Keys, n.Values = append(n.Keys, key), append(n.Values, v)
			}
		case '[':
			n.Kind = Array
			for d.dec.More() {
				v, err := d.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.Items = append(n.Items, v)
			}
		default:
			return nil, &Error{Line: line, Reason: "unexpected " + strconv.QuoteRune(rune(t))}
		}
		if _, err := d.dec.Token(); err != nil { // the closing delimiter
			return nil, d.syntax(err)
		}
	case string:
		n.Kind, n.Text = String, t
	case json.Number:
		n.Kind, n.Text = Number, t.String()
	case bool:
		n.Kind, n.Text = Bool, strconv.FormatBool(t)
	case nil:
		n.Kind = Null
	}
	return n, nil
}

func (d *jsonReader) syntax(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := min(int(se.Offset), len(d.data))
		return &Error{Line: 1 + bytes.Count(d.data[:off], []byte{'\n'}), Reason: "not valid JSON: " + se.Error()}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Line: d.line(), Reason: "the document ends early"}
	}
	return &Error{Line: d.line(), Reason: "not valid JSON: " + err.Error()}
}

// CheckBounds reports an [*Error] when n nests deeper than [MaxDepth] or
// holds more than [MaxNodes] values, or when an object names a key twice:
// what a Decoder for another format calls on the tree it made.
func CheckBounds(n *Node) error {
	count := 0
	var walk func(n *Node, depth int) error
	walk = func(n *Node, depth int) error {
		if n == nil {
			return &Error{Reason: "a missing value"}
		}
		if depth > MaxDepth {
			return &Error{Line: n.Line, Reason: fmt.Sprintf("values nest deeper than %d levels", MaxDepth)}
		}
		if count++; count > MaxNodes {
			return &Error{Line: n.Line, Reason: fmt.Sprintf("more than %d values", MaxNodes)}
		}
		if len(n.Keys) != len(n.Values) {
			return &Error{Line: n.Line, Reason: "an object whose keys and values do not pair"}
		}
		seen := make(map[string]bool, len(n.Keys))
		for i, k := range n.Keys {
			if seen[k] {
				return &Error{Line: n.Values[i].lineOr(n.Line), Field: k, Reason: "the key is given twice"}
			}
			seen[k] = true
			if err := walk(n.Values[i], depth+1); err != nil {
				return err
			}
		}
		for _, it := range n.Items {
			if err := walk(it, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(n, 0)
}

func (n *Node) lineOr(line int) int {
	if n != nil && n.Line > 0 {
		return n.Line
	}
	return line
}

// get returns the value of key in an object, or nil.
func (n *Node) get(key string) *Node {
	for i, k := range n.Keys {
		if k == key {
			return n.Values[i]
		}
	}
	return nil
}
