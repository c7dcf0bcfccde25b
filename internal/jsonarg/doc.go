// Package jsonarg is the strict JSON argument checker behind toolmw.Typed.
//
// [For] builds the field model of a Go type once: which JSON each field
// accepts, which fields are required, how embedded structs promote their
// fields, following encoding/json's rules. [Model.Decode] checks a call's
// arguments against the model and, only when they fit, decodes them with
// encoding/json. Every mismatch is reported at once as a
// taxonomy.FieldError of a tool-args-invalid error, with its location
// (["items", 2, "qty"]) and a fixed message that never repeats the input
// values; object keys echoed in a location are cut to 64 bytes.
//
// The package is internal: toolmw.Typed is its API, and its tests and fuzz
// target (FuzzTyped) check the behaviour end to end.
package jsonarg
