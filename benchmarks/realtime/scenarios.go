package realtime

import "time"

// Scenarios returns the scenarios the command runs, their durations times scale: the quality
// bench's main situations, on a FIFO dependency of 50ms calls with a timeout inside the limit.
func Scenarios(scale float64) []Scenario {
	const svc = 50 * time.Millisecond
	d := func(s float64) time.Duration { return time.Duration(s * scale * float64(time.Second)) }
	rate := func(load float64, workers int) float64 { return load * float64(workers) / svc.Seconds() }
	return []Scenario{
		{Name: "overload", Doc: "a cold start under 1.5x overload: knee 16, a timeout of 3 service times",
			Service: svc, Timeout: 3 * svc,
			Phases: []Phase{{Duration: d(60), Workers: 16, Rate: rate(1.5, 16)}}},
		{Name: "steps", Doc: "capacity 32 > 8 > 32 workers under a load of 1.5x the highest (6x the lowest), a timeout of 3 service times",
			Service: svc, Timeout: 3 * svc,
			Phases: []Phase{
				{Duration: d(40), Workers: 32, Rate: rate(1.5, 32)},
				{Duration: d(40), Workers: 8, Rate: rate(1.5, 32)},
				{Duration: d(40), Workers: 32, Rate: rate(1.5, 32)},
			}},
		{Name: "timeouts", Doc: "a cold start under 3x overload behind a timeout of 2 service times, so that a queue of more than one call per worker times out: knee 16",
			Service: svc, Timeout: 2 * svc,
			Phases: []Phase{{Duration: d(40), Workers: 16, Rate: rate(3, 16)}}},
	}
}
