package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/scrub"
)

// scrubParts returns parts with the text of each scrubbed: a text part's or
// an embedded resource's text, the strings of a JSON part ([scrubJSON]),
// every part's name, URI, MIME type and annotations, and a kind that is
// not one of toolmw's. Data (an image's, audio's, a
// file's or a blob's bytes) is never read. It returns parts itself when
// nothing changed, else a new slice.
func scrubParts(s *scrub.Scrubber, parts []toolmw.Part) []toolmw.Part {
	var out []toolmw.Part
	for i, p := range parts {
		q, changed := scrubPart(s, p)
		if !changed {
			continue
		}
		if out == nil {
			out = append([]toolmw.Part(nil), parts...)
		}
		out[i] = q
	}
	if out == nil {
		return parts
	}
	return out
}

func scrubPart(s *scrub.Scrubber, p toolmw.Part) (toolmw.Part, bool) {
	q := p
	if p.Kind == toolmw.PartJSON {
		var valid bool
		q.Text, valid = scrubJSON(s, p.Text)
		if q.Text != p.Text && !valid {
			q.Kind = toolmw.PartText // no longer JSON: never unscrubbed
		}
	} else {
		q.Text = s.String(p.Text)
	}
	q.Name, q.URI, q.MIMEType = s.String(p.Name), s.String(p.URI), s.String(p.MIMEType)
	if !p.Kind.Valid() {
		q.Kind = toolmw.PartKind(s.String(string(p.Kind))) // a kind the tool made up is its text
	}
	if a := p.Annotations; a != nil {
		c := *a
		c.LastModified = s.String(a.LastModified)
		copied := false
		for i, who := range a.Audience {
			if clean := s.String(who); clean != who {
				if !copied {
					c.Audience, copied = append([]string(nil), a.Audience...), true
				}
				c.Audience[i] = clean
			}
		}
		if copied || c.LastModified != a.LastModified {
			q.Annotations = &c
		}
	}
	return q, q.Kind != p.Kind || q.Text != p.Text || q.Name != p.Name || q.URI != p.URI ||
		q.MIMEType != p.MIMEType || q.Annotations != p.Annotations
}

// scrubJSON returns doc with its strings scrubbed and whether the result
// is valid JSON. A document that scrubs clean is returned as it is. Else,
// when scrubbing the document whole leaves it valid JSON, that is the
// result: the scrubber reads each value beside its key ("password":
// "hunter2"). When it does not (a placeholder in place of a bare number,
// as a card number written as a number), the document is rebuilt token by
// token, compact: each key scrubbed, and each scalar scrubbed beside the
// key it is under (an array's elements beside the array's key); a value
// whose scrubbing is no longer JSON becomes a JSON string of the
// scrubbed text. A document that was not valid JSON is scrubbed as text
// and reported invalid.
func scrubJSON(s *scrub.Scrubber, doc string) (string, bool) {
	whole := s.String(doc)
	if whole == doc {
		return doc, json.Valid([]byte(doc))
	}
	if json.Valid([]byte(whole)) {
		return whole, true
	}
	if !json.Valid([]byte(doc)) {
		return whole, false
	}
	if out, ok := rebuildJSON(s, doc); ok {
		return out, true
	}
	return whole, false
}

// rebuildJSON rebuilds a valid document with its keys and scalars
// scrubbed, as scrubJSON describes.
func rebuildJSON(s *scrub.Scrubber, doc string) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	type frame struct {
		obj bool
		n   int
		key string // the key this container's scalars are read beside
	}
	var (
		out    bytes.Buffer
		stack  []frame
		key    string
		hasKey bool
	)
	// prefix writes what goes before a value: a comma, and its key.
	prefix := func(k string) {
		if len(stack) == 0 {
			return
		}
		f := &stack[len(stack)-1]
		if f.n > 0 {
			out.WriteByte(',')
		}
		f.n++
		if f.obj {
			out.Write(encode(k))
			out.WriteByte(':')
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", false
		}
		in := len(stack) > 0
		if in && stack[len(stack)-1].obj && !hasKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				out.WriteByte('}')
				continue
			}
			key, hasKey = tok.(string), true
			continue
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				ctx := key
				if in && !stack[len(stack)-1].obj {
					ctx = stack[len(stack)-1].key
				}
				prefix(s.String(key))
				stack = append(stack, frame{obj: v == '{', key: ctx})
				out.WriteByte(byte(v))
			case ']':
				stack = stack[:len(stack)-1]
				out.WriteByte(']')
			}
		default:
			raw := encode(v)
			switch {
			case in && stack[len(stack)-1].obj:
				k, val := scrubPair(s, key, raw)
				prefix(k)
				out.Write(val)
			case in && stack[len(stack)-1].key != "":
				_, val := scrubPair(s, stack[len(stack)-1].key, raw)
				prefix("")
				out.Write(val)
			default:
				prefix("")
				out.Write(scrubScalar(s, raw))
			}
		}
		hasKey = false
	}
	return out.String(), json.Valid(out.Bytes())
}

// scrubPair returns key and the scalar raw scrubbed as the member
// {key: raw}, so the scrubber reads the value beside its key.
func scrubPair(s *scrub.Scrubber, key string, raw []byte) (string, []byte) {
	k := encode(key)
	pair := "{" + string(k) + ":" + string(raw) + "}"
	clean := s.String(pair)
	if clean == pair {
		return key, raw
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(clean), &m) == nil && len(m) == 1 {
		for k2, v2 := range m {
			return k2, scrubScalar(s, v2)
		}
	}
	// The value's scrubbing is no longer JSON: keep its text as a string.
	k2 := s.String(key)
	head := "{" + string(encode(k2)) + ":"
	if rest, ok := strings.CutPrefix(clean, head); ok && strings.HasSuffix(rest, "}") {
		return k2, encode(strings.TrimSuffix(rest, "}"))
	}
	return k2, encode("[REDACTED]")
}

// scrubScalar returns the scalar raw scrubbed on its own: a string's text,
// a number as written (a string of the scrubbed text when it changed).
func scrubScalar(s *scrub.Scrubber, raw []byte) []byte {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		if clean := s.String(str); clean != str {
			return encode(clean)
		}
		return raw
	}
	if clean := s.String(string(raw)); clean != string(raw) {
		if json.Valid([]byte(clean)) {
			return []byte(clean)
		}
		return encode(clean)
	}
	return raw
}

// encode returns v as JSON; v is a string, a json.Number, a bool or nil,
// which always encode.
func encode(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
