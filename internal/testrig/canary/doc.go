// Package canary holds the planted secrets toolmw's tests use to prove that
// nothing secret reaches a span, a log line at WARN or above, an event or
// the model's text. It is for tests only.
package canary
