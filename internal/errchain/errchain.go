// Package errchain walks an error's chain the way errors.Is does: the error
// itself first, then what Unwrap() error returns, and depth first through
// the errors of Unwrap() []error. taxonomy and mapper share it, so both read
// a chain in the same order.
package errchain

// Find visits err's chain outermost first, depth first, and returns the
// first result visit reports. It allocates nothing of its own.
func Find[R any](err error, visit func(error) (R, bool)) (R, bool) {
	for err != nil {
		if r, ok := visit(err); ok {
			return r, true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if r, ok := Find(e, visit); ok {
					return r, true
				}
			}
			err = nil
		default:
			err = nil
		}
	}
	var zero R
	return zero, false
}
