// Package browsertest drives the console (its live state page and its
// approval desk) in headless Chromium (Debian's chromium package, found on
// PATH or named by TOOLMW_CHROMIUM) through the Chrome DevTools Protocol
// (chromedp). It is a module of its own so the main module never requires
// chromedp. Without a Chromium the tests skip, unless
// TOOLMW_REQUIRE_CHROMIUM=1 (set by .ci/run) makes that a failure.
//
// The tests save screenshots of the page as test artifacts (the testing
// package's ArtifactDir): keep them with
//
//	go test -artifacts -outputdir /tmp/console-shots ./...
//
// and find them under /tmp/console-shots; without -artifacts they are
// removed after the run.
package browsertest
