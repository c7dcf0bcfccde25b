// Package canary holds planted secrets of several families (a GitHub token,
// an AWS key id, an Anthropic key, a JWT, an e-mail address, a card number)
// and the checks that find them, so that a test can prove that nothing
// secret reaches a span, a log line, an event, a page or the model's text.
// toolmw's own tests use it; so can yours: plant [Values] in a tool's
// arguments and errors, then run [Leaked] over what your loop wrote.
package canary
