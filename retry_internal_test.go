package r4c

import (
	"testing"
	"time"
)

// A jittered wait never exceeds MaxWait: jitter spreads a capped wait below the cap.
func TestJitteredWaitNeverExceedsMaxWait(t *testing.T) {
	h := newRetry(&Registry{clock: SystemClock()}, "r")(RetryConfig{MaxAttempts: 40, Wait: time.Second, Multiplier: 2,
		MaxWait: 100 * time.Second, Jitter: 0.5})
	below := 0
	for n := 1; n < 40; n++ {
		for range 50 {
			w := h.backoff(n)
			if w > 100*time.Second {
				t.Fatalf("wait %v after attempt %d, over MaxWait 100s", w, n)
			}
			if n > 10 && w < 100*time.Second {
				below++
			}
		}
	}
	if below == 0 {
		t.Fatal("capped waits are not spread by the jitter")
	}
}
