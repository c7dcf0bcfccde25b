// Package clock abstracts time for the layers that wait or measure, so tests
// can drive them deterministically: [System] is the real clock, [Fake] a
// manual one whose time moves only when the test says so.
//
// This package imports only the standard library.
package clock
