package browsertest

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var (
	screenshot = flag.String("screenshot", "", "also save the dashboard's screenshot to this file (docs/dashboard.png)")
	watch      = flag.Duration("watch", 0, "with -screenshot: how long the page keeps updating before the screenshot (the demo runs at 5x)")
)

// chromium finds the browser: Debian's package installs /usr/bin/chromium.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium: install it (apt-get install -y chromium; .ci/run does it when it runs as root)")
	return ""
}

// startDemo builds the demo and starts it with -serve on a free loopback port; it returns the
// dashboard's address. The demo stops when the test ends.
func startDemo(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "r4c-demo")
	build := exec.Command("go", "build", "-o", bin, "./cmd/r4c-demo")
	build.Dir = ".." // the core module, where the demo is
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	demo := exec.Command(bin, "-serve", "127.0.0.1:0", "-speed", "5", "-algorithm", "knee,gradient2,aimd")
	out, err := demo.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	demo.Stderr = os.Stderr
	if err := demo.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		demo.Process.Signal(os.Interrupt)
		demo.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the demo said nothing: %v", err)
	}
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(line)
	if url == "" {
		t.Fatalf("no address in %q", line)
	}
	go func() { // keep reading, so the demo never blocks on its output
		buf := make([]byte, 4096)
		for {
			if _, err := out.Read(buf); err != nil {
				return
			}
		}
	}()
	return url
}

// browser starts headless Chromium with the flags this machine needs (no sandbox as root, no
// background networking: the network is closed) and a fresh profile.
func browser(t *testing.T, width, height int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// TestDashboardInABrowser loads the demo's dashboard in headless Chromium: the page shows every
// limit of the demo with a chart whose points grow as events arrive, text alternatives for the
// charts, and it can be used from the keyboard.
func TestDashboardInABrowser(t *testing.T) {
	url := startDemo(t)
	ctx := browser(t, 1280, 1000)
	points := chromedp.Evaluate[int](`Number(document.querySelector(".limit-card svg.chart").dataset.points)`)

	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(".limit-card svg.chart"))); err != nil {
		t.Fatal(err)
	}
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".limit-card")].map(c => c.dataset.id)`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, ",") != "aimd,gradient2,knee" {
		t.Fatalf("the page shows the limits %q, want aimd, gradient2 and knee", ids)
	}
	before, err := chromedp.Run(ctx, points)
	if err != nil {
		t.Fatal(err)
	}

	// The chart updates: the page itself waits, in the browser, until the first chart has more
	// points than before (a point a simulated second: five a second at 5x). The browser's
	// context times the wait out; no goroutine here sleeps.
	after, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`new Promise(resolve => {
		const points = () => Number(document.querySelector(".limit-card svg.chart").dataset.points);
		const check = () => points() > %d ? resolve(points()) : requestAnimationFrame(check);
		check();
	})`, before), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("the chart did not update from %d points: %v", before, err)
	}
	if after <= before {
		t.Fatalf("the chart did not update: %d points, then %d", before, after)
	}
	if *watch > 0 { // a fuller chart for the documentation's screenshot, timed by the page
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`new Promise(r => setTimeout(() => r(true), %d))`, watch.Milliseconds()), chromedp.EvalAwaitPromise)); err != nil {
			t.Fatal(err)
		}
	}
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("status")))
	if err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".limit-card svg.chart title").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if status != "live" || !strings.Contains(title, "Limit, calls in flight and window latency of aimd over the last") {
		t.Fatalf("status %q, chart title %q", status, title)
	}

	// Usable without a mouse: Tab moves the focus to the page's controls and cards.
	if err := chromedp.Do(ctx, chromedp.KeyEvent("\t"), chromedp.KeyEvent("\t")); err != nil {
		t.Fatal(err)
	}
	focused, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id || document.activeElement.dataset.id || document.activeElement.tagName`))
	if err != nil {
		t.Fatal(err)
	}
	if focused == "" || focused == "BODY" {
		t.Fatalf("Tab focuses nothing (%q)", focused)
	}
	// The page updates every second, replacing its cards: the focus stays on the same card.
	refocused, err := chromedp.Run(ctx, chromedp.Evaluate[string](`new Promise(r => {
		new MutationObserver((_, o) => { o.disconnect(); setTimeout(() => {
			const a = document.activeElement; r(a.id || a.dataset.id || a.tagName) }, 0) })
			.observe(document.getElementById("limits"), { childList: true })
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if refocused != focused {
		t.Fatalf("an update moved the focus from %q to %q", focused, refocused)
	}

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard.png")
	if *screenshot != "" {
		path = *screenshot
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d points in the first chart; focus on %q)", path, after, focused)
}

// TestDashboardOnAPhone loads the page at a phone's size: nothing is wider than the screen.
func TestDashboardOnAPhone(t *testing.T) {
	url := startDemo(t)
	ctx := browser(t, 390, 844)
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(".limit-card svg.chart"))); err != nil {
		t.Fatal(err)
	}
	overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if overflow {
		t.Fatal("the page is wider than a phone's screen")
	}
}
