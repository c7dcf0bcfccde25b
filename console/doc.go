// Package console serves a small web console for a toolmw deployment: an
// http.Handler, mounted like net/http/pprof under a prefix of the
// application's choice, of plain HTML and CSS embedded in the binary (no
// script, no third-party front end, nothing fetched from elsewhere). Its
// views are added by options; each has a page and the same data as JSON.
//
//	desk := approval.NewDesk(approval.WithStore(shared), approval.WithSealKey(key))
//	mux.Handle("/debug/toolmw/", http.StripPrefix("/debug/toolmw", console.New(
//		console.WithDesk(desk,
//			console.WithReviewer(func(r *http.Request) (string, bool) { return mySession(r).User, mySession(r).Reviewer }),
//			console.WithAuthorize(func(reviewer, tool string) bool { return myPolicy.MayDecide(reviewer, tool) })),
//	)))
//
// # The approval desk
//
// [WithDesk] adds "approvals" (and "approvals.json"): the requests of an
// approval.Desk that wait for a decision — tool, arguments as the request
// covers them (the Desk's scrubbed summary), who asked (the run's id,
// scrubbed), when — and the approvals not yet used, with their expiry.
// A reviewer approves (for [WithApprovalTTL]) or denies with a reason, or
// revokes an approval. It works over every approval store that lists its
// requests (approval.Lister): the MemoryStore, adapters/redisstate and
// adapters/sqlstore. Rows that fail their check are never shown, only
// counted.
//
// Access is the embedding application's: the desk needs [WithReviewer]
// (who sends this request) and [WithAuthorize] (may this reviewer decide
// this tool), asked on the server for every decision; without them the
// console is misconfigured and refuses everything. Every decision is
// stored by approval.Desk.ApproveBy or DenyBy, with the reviewer's
// identity and reason in the sealed row, and reported to the Desk's
// approval.WithOnVerdict callback.
//
// # Forgery
//
// State changes come by POST only. Every POST must come from the
// console's own origin (http.CrossOriginProtection: Sec-Fetch-Site, or
// Origin against Host) and carry the form's token, an HMAC of the
// browser's session cookie (random, HttpOnly, SameSite=Strict) and the
// reviewer under the console's key ([WithCSRFKey]). Every response forbids
// framing, caching and sniffing, and a Content-Security-Policy lets the
// page load nothing but its own stylesheet and post forms nowhere but to
// itself.
//
// # What it shows
//
// Only what the sealed rows say, escaped by html/template: the scrubbed
// summary, never raw arguments; approval ids, which are hashes; never a
// model's call id or an idempotency key.
package console
