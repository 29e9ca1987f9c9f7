// Package browsertest checks the live dashboard in a real browser: it starts the demo with
// -serve and drives headless Chromium through the DevTools protocol (chromedp). It is a module
// of its own so that neither the core nor the demo depends on a browser driver. .ci/run installs
// Chromium from the Debian packages when it is missing.
package browsertest
