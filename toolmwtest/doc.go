// Package toolmwtest is toolmw's test kit for code built on it: what the
// project's own adapters are tested with, for an adapter or an agent loop
// of your own.
//
//   - [TestAdapter] runs the contract of an adapter that dispatches a
//     model turn's tool calls (through package turn) on your adapter:
//     answers in the model's order, the parallelism bound, contained
//     panics and Goexit, the typed stops, only offered tools;
//   - [Barrier] proves that calls were in flight at the same time;
//   - [Envelope], [DecodeJSON], [SameJSON] and [NoSecrets] read what a
//     model is sent;
//   - package replay serves recorded model-API replies to a real SDK
//     client on 127.0.0.1, and package canary holds planted secrets to
//     prove that none reaches a span, a log line or the model.
//
// The store ports have kits of their own beside each layer (approvaltest,
// breakertest, ratelimittest, runlimittest, spendtest, budgettest).
package toolmwtest
