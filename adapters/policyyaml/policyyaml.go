// Package policyyaml reads toolmw policy documents (package policy) written
// in YAML, with errors that name the line, as the JSON reader does:
//
//	set, err := policy.Load("policy.yaml", policy.WithDecoder(policyyaml.Decode))
//
// It is a module of its own, so the main module does not require a YAML
// library (go.yaml.in/yaml/v3).
//
// The document is the same as in JSON (see package policy). What YAML
// allows beyond it is refused, with the line: more than one document in
// the stream, anchors, aliases and merge keys (an alias may repeat a
// subtree without bound), tags other than YAML's own scalar, sequence and
// mapping tags, keys that are not plain strings, and a key given twice.
// The bounds of package policy apply: policy.MaxDepth levels and
// policy.MaxNodes values.
package policyyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/toolmw/toolmw/policy"
)

// Decode reads a YAML policy document into policy's tree. It is a
// policy.Decoder.
func Decode(data []byte) (*policy.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &policy.Error{Line: 1, Reason: "the document is empty"}
		}
		return nil, syntax(err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, &policy.Error{Line: more.Line, Reason: "more than one document in the stream"}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &policy.Error{Line: doc.Line, Reason: "the document is empty"}
	}
	c := &converter{}
	n, err := c.node(doc.Content[0], 0)
	if err != nil {
		return nil, err
	}
	if err := policy.CheckBounds(n); err != nil {
		return nil, err
	}
	return n, nil
}

type converter struct{ nodes int }

func (c *converter) node(y *yaml.Node, depth int) (*policy.Node, error) {
	if depth > policy.MaxDepth {
		return nil, &policy.Error{Line: y.Line, Reason: fmt.Sprintf("values nest deeper than %d levels", policy.MaxDepth)}
	}
	if c.nodes++; c.nodes > policy.MaxNodes {
		return nil, &policy.Error{Line: y.Line, Reason: fmt.Sprintf("more than %d values", policy.MaxNodes)}
	}
	if y.Anchor != "" || y.Kind == yaml.AliasNode {
		return nil, &policy.Error{Line: y.Line, Reason: "anchors and aliases are not read in a policy document"}
	}
	n := &policy.Node{Line: y.Line}
	switch y.Kind {
	case yaml.MappingNode:
		if y.Tag != "!!map" {
			return nil, badTag(y)
		}
		n.Kind = policy.Object
		for i := 0; i+1 < len(y.Content); i += 2 {
			k, v := y.Content[i], y.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Tag != "!!str" && k.Tag != "!!int" && k.Tag != "!!float" && k.Tag != "!!bool" {
				if k.Tag == "!!merge" {
					return nil, &policy.Error{Line: k.Line, Reason: "merge keys (<<) are not read in a policy document"}
				}
				return nil, &policy.Error{Line: k.Line, Reason: "a key must be a plain string"}
			}
			val, err := c.node(v, depth+1)
			if err != nil {
				return nil, err
			}
			n.Keys, n.Values = append(n.Keys, k.Value), append(n.Values, val)
		}
	case yaml.SequenceNode:
		if y.Tag != "!!seq" {
			return nil, badTag(y)
		}
		n.Kind = policy.Array
		for _, it := range y.Content {
			v, err := c.node(it, depth+1)
			if err != nil {
				return nil, err
			}
			n.Items = append(n.Items, v)
		}
	case yaml.ScalarNode:
		n.Text = y.Value
		switch y.Tag {
		case "!!str":
			n.Kind = policy.String
		case "!!int", "!!float":
			n.Kind = policy.Number
			if _, err := strconv.ParseFloat(y.Value, 64); err != nil {
				return nil, &policy.Error{Line: y.Line, Reason: fmt.Sprintf("%q is not a number", y.Value)}
			}
		case "!!bool":
			n.Kind = policy.Bool
			b, err := strconv.ParseBool(y.Value)
			if err != nil {
				return nil, &policy.Error{Line: y.Line, Reason: fmt.Sprintf("%q is not true or false", y.Value)}
			}
			n.Text = strconv.FormatBool(b)
		case "!!null":
			n.Kind = policy.Null
		default:
			return nil, badTag(y)
		}
	default:
		return nil, &policy.Error{Line: y.Line, Reason: "a value of an unknown kind"}
	}
	return n, nil
}

func badTag(y *yaml.Node) error {
	return &policy.Error{Line: y.Line, Reason: fmt.Sprintf("the tag %.32q is not read in a policy document", y.Tag)}
}

// yamlLine finds the line in the YAML library's messages ("yaml: line 3: …").
var yamlLine = regexp.MustCompile(`line (\d+)`)

func syntax(err error) error {
	line := 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	return &policy.Error{Line: line, Reason: "not valid YAML: " + err.Error()}
}
