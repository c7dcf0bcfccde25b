package bench

// toolmwSystems lists the toolmw systems: the default stack and each layer
// alone, every one wrapped with toolmw.Wrap as a user would.
func toolmwSystems() []system {
	return nil
}
