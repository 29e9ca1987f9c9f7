package r4chttp

import (
	"bufio"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"

	"github.com/resilience4cata/r4c"
)

// responseWriter is the writer next gets. It records the status for the classifier, and lets
// the handler answer a timeout while next may still be writing: next writes to a header map of
// its own, and every write goes through mu, so that once the handler has answered (or returned)
// next's writes are discarded instead of racing with it.
type responseWriter struct {
	w http.ResponseWriter
	h http.Header // next's headers, copied to w's at WriteHeader and at the end

	mu       sync.Mutex
	status   int  // the final status written, 0 before
	closed   bool // the handler answered a timeout or returned: writes are discarded
	hijacked bool
	panicVal any // a panic of next to re-raise, with hasPanic
	hasPanic bool
}

func newResponseWriter(w http.ResponseWriter) *responseWriter {
	return &responseWriter{w: w, h: w.Header().Clone()}
}

// Header returns next's header map.
func (rw *responseWriter) Header() http.Header { return rw.h }

// WriteHeader sends the status and next's headers (a 1xx status passes through and leaves the
// final status to come).
func (rw *responseWriter) WriteHeader(code int) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.closed || rw.status != 0 || rw.hijacked {
		return
	}
	rw.writeHeaderLocked(code)
}

func (rw *responseWriter) writeHeaderLocked(code int) {
	rw.copyHeaders()
	rw.w.WriteHeader(code)
	if code >= 200 || code == http.StatusSwitchingProtocols {
		rw.status = code
	}
}

// copyHeaders makes w's header map what next's is.
func (rw *responseWriter) copyHeaders() {
	dst := rw.w.Header()
	for k := range dst {
		if _, ok := rw.h[k]; !ok {
			delete(dst, k)
		}
	}
	for k, v := range rw.h {
		dst[k] = v
	}
}

// Write writes to the response, sending a 200 first if next has sent no status.
func (rw *responseWriter) Write(b []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.closed {
		return 0, http.ErrHandlerTimeout
	}
	if rw.status == 0 {
		rw.writeHeaderLocked(http.StatusOK)
	}
	return rw.w.Write(b)
}

// Flush sends what is buffered (a 200 first if next has sent no status), if w can.
func (rw *responseWriter) Flush() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.closed || rw.hijacked {
		return
	}
	if rw.status == 0 {
		rw.writeHeaderLocked(http.StatusOK)
	}
	if f, ok := rw.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack hands the connection to next, if w can: the request's outcome is then ignored.
func (rw *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.closed {
		return nil, nil, http.ErrHandlerTimeout
	}
	hj, ok := rw.w.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("r4chttp: the response writer cannot hijack: %w", http.ErrNotSupported)
	}
	c, brw, err := hj.Hijack()
	if err == nil {
		rw.hijacked = true
	}
	return c, brw, err
}

// Unwrap returns the writer underneath, for http.ResponseController.
func (rw *responseWriter) Unwrap() http.ResponseWriter { return rw.w }

var errHijacked = errors.New("r4chttp: the connection was hijacked")

// outcome classifies the response next wrote (200 if it wrote nothing, as net/http answers).
func (rw *responseWriter) outcome(classify func(int) error) error {
	rw.mu.Lock()
	status, hijacked := rw.status, rw.hijacked
	rw.mu.Unlock()
	if hijacked {
		return r4c.Ignored(errHijacked)
	}
	if status == 0 {
		status = http.StatusOK
	}
	return classify(status)
}

// panicked records a panic of next, to be re-raised once the slot is free, and returns the
// call's outcome: a drop (http.ErrAbortHandler: ignored). A panic after the request timed out
// has no one to reach: it is logged.
func (rw *responseWriter) panicked(v any) error {
	rw.mu.Lock()
	late := rw.closed
	if !late {
		rw.panicVal, rw.hasPanic = v, true
	}
	rw.mu.Unlock()
	if late {
		log.Printf("r4chttp: a handler panicked after its request had timed out (recovered): %v", v)
	}
	err := fmt.Errorf("r4chttp: the handler panicked: %v", v)
	if v == http.ErrAbortHandler {
		return r4c.Ignored(err)
	}
	return r4c.Dropped(err)
}

// panicValue returns next's panic, if it panicked before the handler returned.
func (rw *responseWriter) panicValue() (any, bool) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.panicVal, rw.hasPanic
}

// answer writes the handler's own response (a rejection, a timeout) if next has written
// nothing, and closes the writer to next.
func (rw *responseWriter) answer(code int, retryAfter, msg string) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.closed {
		return
	}
	rw.closed = true
	if rw.status != 0 || rw.hijacked {
		return // too late for a status: the response is cut where next left it
	}
	h := rw.w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	rw.w.WriteHeader(code)
	fmt.Fprintln(rw.w, msg)
	rw.status = code
}

// close ends next's use of the writer when the handler returns: headers next set after its
// status (trailers) or without writing anything reach w.
func (rw *responseWriter) close() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.closed {
		return
	}
	rw.closed = true
	if !rw.hijacked {
		rw.copyHeaders()
	}
}
