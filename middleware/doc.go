// Package middleware assembles toolmw's layers into a [Stack]: an ordered
// list of named middlewares that can be printed, and varied one layer at a
// time with Replace, Remove, InsertBefore and InsertAfter.
//
// [Default] is the recommended order, outermost first:
//
//	tracing → logging → events → retry → breaker → ratelimit → timeout → recovery → redact → classify → tool
//
// Its documentation explains why each layer sits where it does and what
// changes when a user reorders them. Each layer also lives in its own
// package under middleware/ and can be used alone.
//
//	stack := middleware.Default(middleware.WithLogger(logger))
//	stack, err := stack.Replace(middleware.Breaker, myBreaker)
//	tool, err := stack.Wrap(toolmw.Spec{Name: "search", Idempotent: true}, search)
//
// A Stack is an immutable value and safe for concurrent use; the tools it
// wraps each get their own per-tool state from every layer.
package middleware
