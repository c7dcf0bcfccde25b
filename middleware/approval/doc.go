// Package approval pauses a tool call for a human's decision.
package approval
