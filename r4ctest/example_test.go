package r4ctest_test

import (
	"fmt"
	"time"

	"github.com/resilience4cata/r4c/r4ctest"
)

func ExampleNewManualClock() {
	clock := r4ctest.NewManualClock()
	clock.AfterFunc(2*time.Second, func() { fmt.Println("fired at", clock.Now().Sub(r4ctest.Epoch)) })
	fmt.Println(clock.Pending())
	clock.Advance(3 * time.Second)
	fmt.Println(clock.Pending(), time.Duration(clock.Nanotime()))
	// Output:
	// 1
	// fired at 2s
	// 0 3s
}
