package approval

import (
	"crypto/sha256"

	"github.com/toolmw/toolmw/internal/canonjson"
)

// digestArgs returns the digest an approval is bound to, and the text a
// reviewer is shown before scrubbing: the canonical form of args (objects
// with sorted keys, no insignificant space, strings escaped the one way
// encoding/json writes them without HTML escapes, numbers as written), so
// an approval holds for the same arguments however the model spaced or
// ordered them. Arguments that are not one valid JSON value in valid UTF-8,
// hold a duplicate key (which parsers read differently) or nest deeper
// than canonjson.MaxDepth are digested as the exact bytes, marked apart, so an
// approval for them holds only for the same bytes.
func digestArgs(args []byte) ([sha256.Size]byte, string) {
	out := make([]byte, 0, len(args)+len(canonicalTag))
	if out, ok := canonjson.Append(append(out, canonicalTag...), args); ok {
		return sha256.Sum256(out), string(out[len(canonicalTag):])
	}
	h := sha256.New()
	h.Write([]byte(rawTag))
	h.Write(args)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum, string(args)
}

// The tags that keep a canonical form and raw bytes from ever sharing a
// digest.
const (
	canonicalTag = "canonical\x00"
	rawTag       = "raw\x00"
)
