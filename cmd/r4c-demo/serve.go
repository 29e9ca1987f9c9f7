package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4chttp"
	"github.com/resilience4cata/r4c/r4ctest"
)

// serve runs the simulation in real time (o.speed simulated seconds a second) and serves the
// dashboard of its registry on o.serve until interrupted; when the simulation ends, it prints
// the report and goes on serving the final state.
func serve(o options, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp", o.serve)
	if err != nil {
		fmt.Fprintf(stderr, "r4c-demo: -serve: %v\n", err)
		return 1
	}
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock))
	if err != nil {
		fmt.Fprintf(stderr, "r4c-demo: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Handler: r4chttp.Dashboard(reg), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }} // an interrupt ends the event streams
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "serving the dashboard on http://%s/ (the simulation runs at %gx real time; interrupt to stop)\n", ln.Addr(), o.speed)

	done := make(chan struct{})
	var results []*Result
	go func() {
		defer close(done)
		start := time.Now()
		pace := func(simulated time.Duration) {
			// Keep to the wall clock: sleep when the simulation is ahead by more than a few ms.
			if d := time.Until(start.Add(time.Duration(float64(simulated) / o.speed))); d > 5*time.Millisecond {
				select {
				case <-time.After(d):
				case <-ctx.Done():
				}
			}
		}
		results, err = RunAll(configs(o), RunOptions{Clock: clock, Registry: reg, Pace: pace})
	}()
	select {
	case <-done:
		if err != nil {
			fmt.Fprintf(stderr, "r4c-demo: %v\n", err)
			return 1
		}
		report(stdout, o, results)
		fmt.Fprintf(stdout, "\nthe simulation is over; still serving the dashboard on http://%s/ (interrupt to stop)\n", ln.Addr())
		<-ctx.Done()
	case <-ctx.Done():
	case err := <-served:
		fmt.Fprintf(stderr, "r4c-demo: %v\n", err)
		return 1
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintf(stderr, "r4c-demo: %v\n", err)
	}
	return 0
}
