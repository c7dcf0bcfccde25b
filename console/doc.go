// Package console serves a small web console for a toolmw deployment: an
// http.Handler, mounted like net/http/pprof under a prefix of the
// application's choice, of plain HTML, CSS and one small script embedded
// in the binary (no build step, no third-party front end, nothing fetched
// from elsewhere). Its views are added by options; each has a page and the
// same data as JSON.
//
//	desk := approval.NewDesk(approval.WithStore(shared), approval.WithSealKey(key))
//	mux.Handle("/debug/toolmw/", http.StripPrefix("/debug/toolmw", console.New(
//		console.WithDesk(desk,
//			console.WithReviewer(func(r *http.Request) (string, bool) { return mySession(r).User, mySession(r).Reviewer }),
//			console.WithAuthorize(func(reviewer, tool string) bool { return myPolicy.MayDecide(reviewer, tool) })),
//	)))
//
// # The state view
//
// [WithState] adds "state" (and "state.json", and "state/events"): every
// tool's layers as they are now, as the layers publish them into package
// state (the registry of [WithRegistry], by default state.Default) — a
// breaker's state and transitions, a bulkhead's calls in flight, queued
// and limit, a rate limiter's waits and refusals, retry and run budgets,
// hedges, spend — the shared stores' failed operations and the calls
// decided without them, and, with [WithFailures], the recent failed calls
// and their counts by tool, kind and code (a [Failures] is an events.Sink
// to give to the events layer).
//
// The page is drawn on the server and then kept live by its script from
// the event stream: the server looks at the state every [WithRefresh]
// (default [DefaultRefresh]) and sends it when it changed, so a breaker
// that trips shows as open within about that interval. Without script the
// page reloads itself every few seconds. One collection is shared by all
// open pages; at most [MaxStreams] streams are served at once.
//
// The view reads only, and has no hook of its own: mount the console
// behind the application's authentication. It shows names (scrubbed, and
// cut to 64 bytes), kinds, codes (as the taxonomy reads them), counts and
// times; never arguments, error text, what the model was told, or call ids.
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
// pages load nothing but their own stylesheet and script, connect nowhere
// but to the console, and post forms nowhere but to itself. The script
// sets text only; it never parses what it receives as HTML.
//
// # What it shows
//
// Only what the sealed rows say, escaped by html/template: the scrubbed
// summary, never raw arguments; approval ids, which are hashes; never a
// model's call id or an idempotency key.
package console
