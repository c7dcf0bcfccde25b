package approval

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/toolmw/toolmw/taxonomy"
)

// State is where an approval request stands.
type State uint8

// The states of a request.
const (
	// StatePending: nobody has decided yet.
	StatePending State = iota + 1
	// StateApproved: a reviewer approved the call, until it expires or is
	// used.
	StateApproved
	// StateDenied: a reviewer denied the call.
	StateDenied
	// StateUsed: the approval was used by the one execution it allows.
	StateUsed
)

var stateNames = [...]string{StatePending: "pending", StateApproved: "approved", StateDenied: "denied", StateUsed: "used"}

// String returns "pending", "approved", "denied" or "used", or "invalid".
func (s State) String() string {
	if s >= StatePending && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "invalid"
}

func parseState(name string) (State, bool) {
	for s := StatePending; int(s) < len(stateNames); s++ {
		if stateNames[s] == name {
			return s, true
		}
	}
	return 0, false
}

// row is one approval request as stored: every field is sealed.
type row struct {
	id      string
	tool    string
	digest  [sha256.Size]byte // of the canonical arguments the request is for
	state   State
	expires int64  // unix nanoseconds; set when approved
	created int64  // unix nanoseconds; when the request was made
	nonce   string // 32 hex digits, new with every decision
	summary string // scrubbed and bounded, for the reviewer
	key     string // the idempotency key of the call that used the approval
	// Version 2 of the row adds who asked and who decided; a row with
	// none of them is written as version 1, as before.
	asker    string // who asked: the run's id, scrubbed; "" when the call had none
	reviewer string // who decided, as the reviewer's side named them; "" when nobody said
	reason   string // the reviewer's reason, scrubbed; may be ""
}

// wireRow is a row's JSON form. JSON keeps rows readable in a database
// console; the seal does not depend on the encoding.
type wireRow struct {
	V        int    `json:"v"`
	ID       string `json:"id"`
	Tool     string `json:"tool"`
	Args     string `json:"args"`
	State    string `json:"state"`
	Expires  int64  `json:"exp,omitempty"`
	Created  int64  `json:"created"`
	Nonce    string `json:"nonce"`
	Summary  string `json:"summary,omitempty"`
	Key      string `json:"key,omitempty"`
	Asker    string `json:"asker,omitempty"`
	Reviewer string `json:"reviewer,omitempty"`
	Reason   string `json:"reason,omitempty"`
	MAC      string `json:"mac"`
}

// The row versions: 1 without asker, reviewer and reason, 2 with any of
// them. Both are read; a row is written as 1 when it can be.
const (
	rowVersion   = 1
	rowVersionV2 = 2
)

// version returns the version r is written as.
func (r *row) version() int {
	if r.asker == "" && r.reviewer == "" && r.reason == "" {
		return rowVersion
	}
	return rowVersionV2
}

// The ways a stored row fails its check; each ends the call as
// approval_store_corrupt.
var (
	errRowMalformed = errors.New("approval: the stored row is malformed")
	errRowSeal      = errors.New("approval: the stored row's seal does not verify")
	errRowElsewhere = errors.New("approval: the stored row belongs to another request")
)

// sealer seals and opens rows with one key.
type sealer struct{ key []byte }

// mac returns the HMAC-SHA256 of r's fields under the sealer's key. Each
// field is length-prefixed, so no two rows share an input.
func (s sealer) mac(r *row) []byte {
	m := hmac.New(sha256.New, s.key)
	var n [binary.MaxVarintLen64]byte
	put := func(b []byte) {
		m.Write(n[:binary.PutUvarint(n[:], uint64(len(b)))])
		m.Write(b)
	}
	v2 := r.version() == rowVersionV2
	if v2 {
		put([]byte("toolmw approval row v2"))
	} else {
		put([]byte("toolmw approval row v1"))
	}
	put([]byte(r.id))
	put([]byte(r.tool))
	put(r.digest[:])
	put([]byte{byte(r.state)})
	put(binary.BigEndian.AppendUint64(nil, uint64(r.expires)))
	put(binary.BigEndian.AppendUint64(nil, uint64(r.created)))
	put([]byte(r.nonce))
	put([]byte(r.summary))
	put([]byte(r.key))
	if v2 {
		put([]byte(r.asker))
		put([]byte(r.reviewer))
		put([]byte(r.reason))
	}
	return m.Sum(nil)
}

// seal returns the stored form of r.
func (s sealer) seal(r *row) []byte { return encode(r, s.mac(r)) }

// encode returns the stored form of r sealed with mac.
func encode(r *row, mac []byte) []byte {
	b, _ := json.Marshal(wireRow{ // a struct of strings and ints always encodes
		V: r.version(), ID: r.id, Tool: r.tool, Args: hex.EncodeToString(r.digest[:]),
		State: r.state.String(), Expires: r.expires, Created: r.created,
		Nonce: r.nonce, Summary: r.summary, Key: r.key,
		Asker: r.asker, Reviewer: r.reviewer, Reason: r.reason,
		MAC: hex.EncodeToString(mac),
	})
	return b
}

// open checks a row read under id and returns it: well formed, sealed with
// the sealer's key, and stored under the id it was made for.
func (s sealer) open(b []byte, id string) (*row, error) {
	if len(b) == 0 || len(b) > MaxRowBytes {
		return nil, errRowMalformed
	}
	// Unknown members, another spelling or trailing space are caught by
	// the exact comparison below.
	var w wireRow
	if err := json.Unmarshal(b, &w); err != nil || w.V != rowVersion && w.V != rowVersionV2 {
		return nil, errRowMalformed
	}
	r := &row{id: w.ID, tool: w.Tool, expires: w.Expires, created: w.Created, nonce: w.Nonce, summary: w.Summary, key: w.Key,
		asker: w.Asker, reviewer: w.Reviewer, reason: w.Reason}
	if r.version() != w.V { // a version 2 row says who; a version 1 row does not
		return nil, errRowMalformed
	}
	state, ok := parseState(w.State)
	if !ok || len(w.Args) != 2*sha256.Size || len(w.MAC) != 2*sha256.Size {
		return nil, errRowMalformed
	}
	r.state = state
	mac := make([]byte, sha256.Size)
	if _, err := hex.Decode(r.digest[:], []byte(w.Args)); err != nil {
		return nil, errRowMalformed
	}
	if _, err := hex.Decode(mac, []byte(w.MAC)); err != nil {
		return nil, errRowMalformed
	}
	want := s.mac(r)
	if !hmac.Equal(mac, want) {
		return nil, errRowSeal
	}
	// Sealed, so written by a holder of the key; still, only as the layer
	// writes rows.
	if !safeToken(r.id, MaxIDLen) || !safeToken(r.nonce, MaxNonceLen) || !safeToken(r.key, MaxIDLen) && r.key != "" ||
		len(r.tool) > 64 || len(r.summary) > taxonomy.MaxApprovalSummary || !utf8.ValidString(r.summary) ||
		!plainText(r.asker, MaxReviewerLen) || !plainText(r.reviewer, MaxReviewerLen) || !plainText(r.reason, MaxReasonLen) {
		return nil, errRowMalformed
	}
	// encoding/json reads field names in any case and skips what it does
	// not need; a row is accepted only as the layer writes it.
	if !bytes.Equal(encode(r, want), b) {
		return nil, errRowMalformed
	}
	if r.id != id {
		return nil, errRowElsewhere
	}
	return r, nil
}

// safeToken reports whether s is 1 to max bytes of ASCII letters, digits
// and "_-.:".
func safeToken(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// plainText reports whether s is at most max bytes of valid UTF-8 without
// control characters ("" is plain).
func plainText(s string, max int) bool {
	if len(s) > max || !utf8.ValidString(s) {
		return false
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f || c >= 0x80 && c < 0xa0 {
			return false
		}
	}
	return true
}
