// Package jsonarg is the strict JSON argument decoder behind toolmw.Typed,
// and the field model package schema renders JSON Schemas from.
//
// [For] builds the field model of a Go type once: which JSON each field
// accepts, which fields are required, how embedded structs promote their
// fields, following encoding/json's naming rules. [Model.Decode] reads a
// call's arguments once, checking and decoding them in the same pass.
// Every mismatch is reported at once as a taxonomy.FieldError of a
// tool-args-invalid error, with its location (["items", 2, "qty"]) and a
// fixed message that never repeats the input: object keys that are not the
// struct's own field names appear in a location as [Placeholder]. [Parse]
// applies the checks every argument gets (size, syntax, UTF-8, duplicate
// keys, number bounds, depth) for a schema validator. Two keys of one
// object that are equal under Unicode simple case folding ("to" and "TO",
// "ſ" and "s") are duplicates too: encoding/json matches keys to struct
// fields that way, so a tool decoding them would get whichever came last.
//
// The package is internal: toolmw.Typed and package schema are its API;
// the differential test in package schema checks the two agree.
package jsonarg
