package policy

import (
	"slices"
	"strings"
)

// envLine marks a node an environment override made.
const envLine = -1

// envName reports whether s is a valid environment variable name.
func envName(s string) bool {
	if s == "" || len(s) > 128 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// fold is how a part of a variable's name is compared with a key.
func fold(s string) string {
	return strings.ToLower(strings.NewReplacer("-", "_", ".", "_").Replace(s))
}

// The fields of a document that hold objects, and those under them: what
// an override may name, below "defaults" and below a tool.
var (
	policyFields = []string{"layers", "timeout", "max_calls_per_run", "retry", "breaker", "rate_limit", "bulkhead"}
	objectFields = map[string][]string{
		"retry":      {"max_attempts", "base_delay", "max_delay", "max_wait", "budget_ratio", "budget_reserve"},
		"breaker":    {"consecutive_failures", "failure_ratio", "min_requests", "interval", "open_for", "probes"},
		"rate_limit": {"per_second", "burst", "max_wait", "reject"},
		"bulkhead":   {"max_concurrent", "max_queue", "max_wait"},
	}
)

// applyEnv returns root with the overrides of environ (KEY=value) under
// prefix applied: a copy, root is not changed. The overridden values are
// nodes at envLine, named in p's errors by their variable.
func applyEnv(root *Node, prefix string, environ []string, p *parser) (*Node, error) {
	if root.Kind != Object {
		return root, nil // the parser says what is wrong with it
	}
	root = cloneNode(root)
	lead := strings.ToUpper(prefix) + "__"
	vars := slices.Clone(environ)
	slices.Sort(vars) // the same order at every load
	for _, kv := range vars {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(strings.ToUpper(name), lead) {
			continue
		}
		fail := func(reason string) error { return &Error{File: "environment", Field: name, Reason: reason} }
		parts := strings.Split(fold(name[len(lead):]), "__")
		var holder *Node
		var fields []string
		switch {
		case len(parts) >= 2 && parts[0] == "defaults":
			holder, parts = member(root, "defaults"), parts[1:]
		case len(parts) >= 3 && parts[0] == "tools":
			tools := root.get("tools")
			if tools == nil || tools.Kind != Object {
				return nil, fail("names a tool, and the document names none")
			}
			var match []int
			for i, k := range tools.Keys {
				if fold(k) == parts[1] {
					match = append(match, i)
				}
			}
			switch len(match) {
			case 0:
				return nil, fail("names no tool of the document")
			case 1:
			default:
				return nil, fail("matches more than one tool of the document")
			}
			holder, parts = tools.Values[match[0]], parts[2:]
		default:
			return nil, fail("must name DEFAULTS__<field> or TOOLS__<tool>__<field>")
		}
		if holder.Kind != Object {
			continue // the parser reports it
		}
		fields = policyFields
		for len(parts) > 1 {
			if !slices.Contains(fields, parts[0]) || objectFields[parts[0]] == nil {
				return nil, fail("names no field (" + parts[0] + ")")
			}
			holder, fields, parts = member(holder, parts[0]), objectFields[parts[0]], parts[1:]
			if holder.Kind != Object {
				break
			}
		}
		if holder.Kind != Object || len(parts) != 1 {
			continue
		}
		if !slices.Contains(fields, parts[0]) || objectFields[parts[0]] != nil {
			return nil, fail("names no field that takes a value (" + parts[0] + ")")
		}
		v := &Node{Kind: String, Line: envLine, Text: value}
		if parts[0] == "layers" {
			v = &Node{Kind: Array, Line: envLine}
			for l := range strings.SplitSeq(value, ",") {
				v.Items = append(v.Items, &Node{Kind: String, Line: envLine, Text: strings.TrimSpace(l)})
			}
		}
		set(holder, parts[0], v)
		if p.env == nil {
			p.env = map[*Node]string{}
		}
		p.env[v] = name
		for _, it := range v.Items {
			p.env[it] = name
		}
	}
	return root, nil
}

// member returns the object under key in n, adding an empty one when n has
// none.
func member(n *Node, key string) *Node {
	if v := n.get(key); v != nil {
		return v
	}
	v := &Node{Kind: Object, Line: n.Line}
	n.Keys, n.Values = append(n.Keys, key), append(n.Values, v)
	return v
}

// set makes v the value of key in n.
func set(n *Node, key string, v *Node) {
	for i, k := range n.Keys {
		if k == key {
			n.Values[i] = v
			return
		}
	}
	n.Keys, n.Values = append(n.Keys, key), append(n.Values, v)
}

func cloneNode(n *Node) *Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Keys = slices.Clone(n.Keys)
	c.Values = make([]*Node, len(n.Values))
	for i, v := range n.Values {
		c.Values[i] = cloneNode(v)
	}
	c.Items = make([]*Node, len(n.Items))
	for i, v := range n.Items {
		c.Items[i] = cloneNode(v)
	}
	return &c
}
