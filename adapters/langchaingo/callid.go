package langchaingo

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"runtime"
	"sync"
	"weak"

	"github.com/toolmw/toolmw/budget"
)

// CallIDPrefix starts every call id the adapter derives for a call made
// through langchaingo's agent executor: "lc_" and 32 hex digits.
const CallIDPrefix = "lc_"

// maxCanonicalBytes bounds the arguments canonicalised for a call id:
// longer ones are hashed as they are (still the same id for the same bytes).
const maxCanonicalBytes = 1 << 20

// callID returns the id of a call of tool with args, made through a
// tools.Tool (the executor does not pass the model's id to the tool). It is
// a keyed hash of the tool, the arguments in canonical form and how many
// calls of the same tool with the same arguments this run made before, so
// that the same run (the same run id), making the same calls again after a
// pause, gives them the same ids. Without a run it is random.
func callID(ctx context.Context, idKey []byte, tool string, args []byte) string {
	run, ok := budget.RunFrom(ctx)
	if !ok || run == nil {
		var b [16]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
		return CallIDPrefix + hex.EncodeToString(b[:])
	}
	st := runs.get(run)
	canon := canonical(args)
	slot := sha256.New()
	writeField(slot, []byte(tool))
	writeField(slot, canon)
	var sum [sha256.Size]byte
	slot.Sum(sum[:0])

	st.mu.Lock()
	n := st.seen[sum]
	st.seen[sum] = n + 1
	st.mu.Unlock()

	// The key: the run's id (its random nonce for a run without one) and
	// the caller's key.
	k := sha256.New()
	k.Write([]byte("toolmw adapters/langchaingo call id\x00"))
	writeField(k, idKey)
	if id := run.ID(); id != "" {
		k.Write([]byte{1})
		writeField(k, []byte(id))
	} else {
		k.Write([]byte{0})
		k.Write(st.nonce[:])
	}
	m := hmac.New(sha256.New, k.Sum(nil))
	writeField(m, []byte(tool))
	writeField(m, canon)
	var nb [8]byte
	binary.BigEndian.PutUint64(nb[:], uint64(n))
	m.Write(nb[:])
	return CallIDPrefix + hex.EncodeToString(m.Sum(nil)[:16])
}

// writeField writes b with its length first, so that no two sequences of
// fields write the same bytes.
func writeField(w interface{ Write([]byte) (int, error) }, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	_, _ = w.Write(n[:])
	_, _ = w.Write(b)
}

// canonical returns args in a form that is the same for the same JSON
// however spaced or ordered (objects' members sorted, numbers as written),
// tagged 'c'; or args as they are, tagged 'r', when they are not one JSON
// value or are too long to decode for this.
func canonical(args []byte) []byte {
	raw := func() []byte { return append([]byte{'r'}, args...) }
	if len(args) > maxCanonicalBytes {
		return raw()
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw()
	}
	if _, err := dec.Token(); err == nil {
		return raw() // more than one value
	}
	out, err := json.Marshal(v) // map keys sorted, json.Number as written
	if err != nil {
		return raw()
	}
	return append([]byte{'c'}, out...)
}

// runState is what the adapter keeps for one run: how many times each
// (tool, arguments) was called, and the run's random nonce.
type runState struct {
	mu    sync.Mutex
	seen  map[[sha256.Size]byte]int
	nonce [16]byte
}

// runs holds each run's state for as long as its *budget.Run lives: a
// weak map, so the state ends with the run without the loop saying so.
var runs runStates

type runStates struct {
	mu sync.Mutex
	m  map[weak.Pointer[budget.Run]]*runState
}

func (s *runStates) get(run *budget.Run) *runState {
	wp := weak.Make(run)
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.m[wp]; ok {
		return st
	}
	if s.m == nil {
		s.m = map[weak.Pointer[budget.Run]]*runState{}
	}
	st := &runState{seen: map[[sha256.Size]byte]int{}}
	_, _ = rand.Read(st.nonce[:])
	s.m[wp] = st
	runtime.AddCleanup(run, s.drop, wp)
	return st
}

// resetRun makes the run in ctx, if any, count calls from zero again: a
// new pass over the run's input begins (the executor's first Plan), or the
// pass ended with a Stop, so the next call of the run starts the input
// again.
func resetRun(ctx context.Context) {
	run, ok := budget.RunFrom(ctx)
	if !ok || run == nil {
		return
	}
	st := runs.get(run)
	st.mu.Lock()
	clear(st.seen)
	st.mu.Unlock()
}

func (s *runStates) drop(wp weak.Pointer[budget.Run]) {
	s.mu.Lock()
	delete(s.m, wp)
	s.mu.Unlock()
}

// has reports whether the run of wp has state, for tests.
func (s *runStates) has(wp weak.Pointer[budget.Run]) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[wp]
	return ok
}
