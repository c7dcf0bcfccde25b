package permit

// Validate reports whether policy can be used, as a
// tool-definition-invalid/option_invalid error, or nil. Every policy can: a
// nil policy denies every call (the safe default), so it returns nil; it is
// here so that every layer is checked the same way.
func Validate(policy Policy) error { return nil }
