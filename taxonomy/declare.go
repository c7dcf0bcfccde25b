package taxonomy

import (
	"sync"
	"sync/atomic"
)

// MaxDeclared bounds how many codes [Declare] keeps in a process: far more
// than the codes of one application's tools and rules, few enough that a
// program declaring codes it received (which it should not) grows the
// vocabulary of its spans and metrics by a bounded amount.
const MaxDeclared = 1024

// declared is the set of codes Declare kept: read without a lock (the map
// a pointer holds is never changed), replaced whole under mu.
var declared struct {
	mu  sync.Mutex
	set atomic.Pointer[map[string]struct{}]
}

// Declare records code as one of the application's own codes — one its
// tools return (taxonomy.Refusal("booking_not_cancellable", …)) or its
// mapper rules give — and returns it, so that the code is declared where
// it is named:
//
//	var codeNotCancellable = taxonomy.Declare("booking_not_cancellable")
//
// Layers that write codes into a bounded vocabulary, such as tracing's
// span attributes and metric series, write a declared code as it is
// instead of as "_OTHER", with no list of their own to keep in step. The
// mapper's verdict constructors declare their codes themselves.
//
// Declare codes the program names, never codes it received from elsewhere
// (a remote server's, a supplier's): those stay outside the vocabulary. A
// code that is not well formed ([ValidCode]) is not recorded (an error
// made with it carries [CodeInvalidCode] anyway), nor is one past
// [MaxDeclared] codes. Declaring a code twice, or a built-in one, is the
// same as once. It is safe for concurrent use.
func Declare(code string) string {
	if !ValidCode(code) || builtin(code) || isDeclared(code) {
		return code
	}
	declared.mu.Lock()
	defer declared.mu.Unlock()
	old := declared.set.Load()
	if old != nil {
		if _, ok := (*old)[code]; ok || len(*old) >= MaxDeclared {
			return code
		}
	}
	next := make(map[string]struct{}, 1+lenOf(old))
	if old != nil {
		for c := range *old {
			next[c] = struct{}{}
		}
	}
	next[code] = struct{}{}
	declared.set.Store(&next)
	return code
}

// Declared reports whether code is a built-in code ([Codes]) or one given
// to [Declare]. It does not allocate and is safe for concurrent use.
func Declared(code string) bool { return builtin(code) || isDeclared(code) }

func isDeclared(code string) bool {
	set := declared.set.Load()
	if set == nil {
		return false
	}
	_, ok := (*set)[code]
	return ok
}

func lenOf(m *map[string]struct{}) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

// builtinSet is the catalogue's codes, as a set.
var builtinSet = func() map[string]struct{} {
	m := make(map[string]struct{}, len(codes))
	for _, c := range codes {
		m[c.Code] = struct{}{}
	}
	return m
}()

func builtin(code string) bool {
	_, ok := builtinSet[code]
	return ok
}
