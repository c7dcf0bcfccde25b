//go:build race

package scrub

// raceEnabled: under the race detector sync.Pool drops a quarter of what
// is put back, so the pooled view allocates now and then.
const raceEnabled = true
