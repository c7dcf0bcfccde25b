package mapper

import "reflect"

// level is where a rule ranks in the precedence of [Map.Classify].
type level uint8

const (
	levelType      level = iota + 1 // sentinels and concrete types
	levelInterface                  // interface families
	levelStatus                     // HTTP status codes
	levelGRPC                       // gRPC status codes, with the HTTP statuses
)

// Rule matches foreign errors and says what they become. Make one with [Is],
// [Type], [TypeFunc], [Interface], [InterfaceFunc], [Status], [StatusRange]
// or [GRPCCode]; the zero Rule matches nothing. A Rule is an immutable value,
// safe to share.
type Rule struct {
	level  level
	target error                        // the sentinel of an Is rule
	cmp    bool                         // whether target can be compared with ==
	match  func(l link) bool            // a fixed verdict: does l match?
	decide func(l link) (Verdict, bool) // a verdict computed from l
	lo, hi uint64                       // the status codes matched, inclusive
	out    Verdict                      // the fixed verdict
}

// Is returns a rule for a sentinel: a link of the chain that is target, or
// whose Is method reports target (errors.Is, one link at a time), becomes o.
// A sentinel rule ranks with the concrete type rules. A nil target matches
// nothing.
func Is(target error, o Verdict) Rule {
	if target == nil {
		return Rule{}
	}
	return Rule{level: levelType, target: target, cmp: reflect.TypeOf(target).Comparable(), out: o}
}

// Type returns a rule for a concrete error type T, such as *net.OpError: a
// link of type T, or whose As method fills a T (errors.As, one link at a
// time), becomes o. If T is an interface type the rule ranks as an
// [Interface] rule.
func Type[T error](o Verdict) Rule {
	return Rule{level: levelOf[T](), out: o, match: func(l link) bool {
		_, ok := as[T](l)
		return ok
	}}
}

// TypeFunc is [Type] with a decision that looks at the value: fn reports
// the verdict for a link of type T, or false to let the walk go on (the
// rule then does not match this link). Messages fn builds are scrubbed.
func TypeFunc[T error](fn func(T) (Verdict, bool)) Rule {
	return Rule{level: levelOf[T](), decide: func(l link) (Verdict, bool) {
		v, ok := as[T](l)
		if !ok {
			return Verdict{}, false
		}
		return fn(v)
	}}
}

// Interface returns a rule for a family of errors that share an interface,
// such as net.Error or interface{ Timeout() bool }: a link implementing T
// becomes o. An interface rule ranks below the sentinel and concrete type
// rules at the same link. If T is not an interface type the rule ranks as a
// [Type] rule.
func Interface[T any](o Verdict) Rule {
	return Rule{level: levelOf[T](), out: o, match: func(l link) bool {
		_, ok := as[T](l)
		return ok
	}}
}

// InterfaceFunc is [Interface] with a decision that looks at the value, for
// example to match a net.Error only when its Timeout method reports true.
// fn reports the verdict, or false to let the walk go on.
func InterfaceFunc[T any](fn func(T) (Verdict, bool)) Rule {
	return Rule{level: levelOf[T](), decide: func(l link) (Verdict, bool) {
		v, ok := as[T](l)
		if !ok {
			return Verdict{}, false
		}
		return fn(v)
	}}
}

// Status returns a rule for one HTTP status code, read from the errors that
// carry one (see the package documentation for the shapes read).
func Status(code int, o Verdict) Rule {
	return StatusRange(code, code, o)
}

// StatusRange returns a rule for the HTTP status codes from lo to hi,
// inclusive, such as StatusRange(500, 599, …). A range with lo > hi or
// below 0 matches nothing.
func StatusRange(lo, hi int, o Verdict) Rule {
	if lo < 0 || hi < lo {
		return Rule{}
	}
	return Rule{level: levelStatus, lo: uint64(lo), hi: uint64(hi), out: o}
}

// GRPCCode returns a rule for a gRPC status code, read from errors with a
// GRPCStatus method (see the package documentation). C is any unsigned
// 32-bit type, so google.golang.org/grpc/codes values work as they are:
// GRPCCode(codes.Unavailable, …). gRPC codes rank with the HTTP statuses.
func GRPCCode[C ~uint32](code C, o Verdict) Rule {
	return Rule{level: levelGRPC, lo: uint64(code), hi: uint64(code), out: o}
}

// levelOf returns the level of a type rule for T: interface types rank
// below concrete ones.
func levelOf[T any]() level {
	if reflect.TypeFor[T]().Kind() == reflect.Interface {
		return levelInterface
	}
	return levelType
}

// is reports whether l is r's sentinel, as errors.Is does for one link.
func (r *Rule) is(l link) bool {
	return (r.cmp && l.err == r.target) || (l.is != nil && l.is.Is(r.target))
}

// link is one error of a chain with its Is and As methods, looked up once
// for all the rules.
type link struct {
	err error
	is  interface{ Is(error) bool } // nil when err has no Is method
	as  interface{ As(any) bool }   // nil when err has no As method
}

func newLink(err error) link {
	l := link{err: err}
	l.is, _ = err.(interface{ Is(error) bool })
	l.as, _ = err.(interface{ As(any) bool })
	return l
}

// as reports whether l is a T, or fills one through its As method, as
// errors.As does for one link. It allocates only on the As path.
func as[T any](l link) (T, bool) {
	if v, ok := l.err.(T); ok {
		return v, true
	}
	if l.as != nil {
		return asMethod[T](l.as)
	}
	var zero T
	return zero, false
}

// asMethod asks x to fill a T. It is apart from as so that only this path
// moves the T to the heap.
func asMethod[T any](x interface{ As(any) bool }) (T, bool) {
	var v T
	ok := x.As(&v)
	return v, ok
}
