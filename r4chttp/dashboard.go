package r4chttp

import (
	"embed"
	"encoding/json"
	"net/http"
	"time"

	"github.com/resilience4cata/r4c"
)

//go:embed dashboard/index.html
var dashboardFiles embed.FS

// Dashboard returns a handler that shows reg's instances live, in a browser. Mount it anywhere:
//
//	mux.Handle("/r4c/", http.StripPrefix("/r4c", r4chttp.Dashboard(reg)))
//
// It serves:
//   - / a self-contained page (HTML, CSS and JavaScript embedded in the binary; it fetches
//     nothing from elsewhere) that shows every instance of every policy: for adaptive limits a
//     chart of the limit, the calls in flight and the window latency over the last minutes,
//     rejections per second and the algorithm; for circuit breakers their state and rates; the
//     main figures of the others;
//   - /snapshot.json, reg.Snapshot() as JSON (Snapshot.MarshalJSON: durations and enumerations
//     by name);
//   - /events, a stream of Server-Sent Events, each an object {"time": ..., "snapshot": ...}
//     (the registry clock's time, RFC 3339): one at once, then one a second of the registry's
//     clock, and one within 100 ms of a limit change or a breaker's state change. The stream
//     ends when the client goes away.
//
// Reading snapshots costs the calls nothing (docs/metrics.md); each open page reads one ten
// times a second to notice changes. The dashboard shows what the registry holds to whoever can
// reach it: mount it where only operators can.
func Dashboard(reg *r4c.Registry) http.Handler {
	d := &dashboard{reg: reg}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.page)
	mux.HandleFunc("GET /snapshot.json", d.snapshot)
	mux.HandleFunc("GET /events", d.events)
	return mux
}

type dashboard struct{ reg *r4c.Registry }

func (d *dashboard) page(w http.ResponseWriter, r *http.Request) {
	page, err := dashboardFiles.ReadFile("dashboard/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// The page needs nothing from elsewhere, and the browser is told so.
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:")
	h.Set("Cache-Control", "no-cache")
	w.Write(page)
}

func (d *dashboard) snapshot(w http.ResponseWriter, r *http.Request) {
	b, err := json.Marshal(d.reg.Snapshot())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b)
}

// Pacing of the event stream, on the registry's clock.
const (
	eventEvery  = time.Second            // a snapshot at least this often
	changeCheck = 100 * time.Millisecond // how often to look for a limit or breaker change
)

// event is one message of the stream.
type event struct {
	Time     time.Time    `json:"time"`
	Snapshot r4c.Snapshot `json:"snapshot"`
}

func (d *dashboard) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	clock := d.reg.Clock()
	ctx := r.Context()

	// The clock's timers tick into this channel: nothing runs while the page is idle but the
	// timer, and the stream stops with the request's context.
	tick := make(chan struct{}, 1)
	var timer r4c.Timer
	arm := func() {
		timer = clock.AfterFunc(changeCheck, func() {
			select {
			case tick <- struct{}{}:
			default:
			}
		})
	}
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()

	var last time.Time
	var lastChanges int64
	for {
		snap := d.reg.Snapshot()
		now := clock.Now()
		if changes := changeCount(snap); last.IsZero() || changes != lastChanges || now.Sub(last) >= eventEvery {
			if err := writeEvent(w, event{Time: now, Snapshot: snap}); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
			last, lastChanges = now, changes
		}
		arm()
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
	}
}

// changeCount adds up the limit changes and the breaker state changes: when it moves, the page
// should know at once.
func changeCount(s r4c.Snapshot) int64 {
	var n int64
	for _, l := range s.AdaptiveLimits {
		n += l.LimitChanges
	}
	for _, b := range s.CircuitBreakers {
		n += b.StateChanges
	}
	return n
}

func writeEvent(w http.ResponseWriter, e event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte("data: ")); err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	_, err = w.Write([]byte("\n\n"))
	return err
}
