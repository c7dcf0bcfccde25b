// Package permit is the permission layer: a policy decides whether a call may
// run, before the tool is called.
//
//	permit.New(permit.Allow("search", "get_booking"))   // an allow-list
//	permit.New(permit.Deny("delete_account"))           // a deny-list
//	permit.New(func(ctx context.Context, call toolmw.Call) error {
//		if !userFrom(ctx).CanBook() && call.Tool == "book" {
//			return taxonomy.NotPermitted("booking_needs_account", "booking needs a signed-in user")
//		}
//		return nil
//	})
//
// A denial is tool-not-permitted. Telemetry reports it as the outcome
// "not_permitted" (taxonomy.OutcomeNotPermitted), and toolmw.ForModel shows
// it as a tool_error: a permission decision, distinct from the tool's own
// refusal (tool-refused, the outcome "refused", shown as a tool_refusal).
//
// # The policy's error
//
// A typed not-permitted error from the policy is returned as it is, with its
// code and message: its maker chose them for the model. Any other error
// denies the call (a policy that cannot decide fails closed) as
// tool-not-permitted/not_permitted with a fixed message, keeping the
// policy's error as the cause: its text, which may hold anything, is never
// shown. A typed not-permitted error wrapped inside another error keeps its
// code but not its message. An error the policy returns because the call's
// context is done (ctx.Err(), possibly wrapped) is not a denial: a
// cancellation is returned unchanged, a passed deadline becomes
// tool-timeout/deadline_exceeded (not retryable) wrapping it.
//
// New(nil) denies every call: a permission layer without a policy fails
// closed.
package permit
