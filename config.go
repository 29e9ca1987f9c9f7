package r4c

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// PolicyConfig is the configuration of one policy: AdaptiveLimitConfig, BulkheadConfig,
// TimeoutConfig, RateLimiterConfig, RetryConfig, CircuitBreakerConfig, HedgeConfig (and, for
// pipelines, a FallbackConfig). Registry options and NewPipeline take any number of them. The
// interface is sealed: only this package's config types implement it.
type PolicyConfig interface {
	// policyName returns the policy's name as used in configuration keys ("adaptiveLimit").
	policyName() string
	// addTo merges the config into a layer of registry configuration.
	addTo(l layer, scope string, named bool) error
	// namedConfig returns the Config field: the named configuration to start from.
	namedConfig() string
}

// LimitAlgorithm selects the algorithm of an adaptive limit. The zero value means "not set".
type LimitAlgorithm uint8

// The algorithms of an adaptive limit. Each has a row in the table algorithms (algorithm.go),
// which gives its configuration name, its default Smoothing and its constructor.
const (
	// Gradient2 compares each window's latency with a long-term average (the default).
	Gradient2 LimitAlgorithm = iota + 1
	// AIMD ignores latency: it backs off after a window with a drop and grows by one otherwise.
	AIMD
	// Vegas estimates the queue from the window's latency over the lowest latency seen (the
	// no-load latency), grows the limit while the queue is short and lowers it when it is long.
	Vegas
	// Knee seeks the knee of the dependency: the smallest concurrency at which it delivers its
	// full throughput, measured from how latency responds to concurrency (docs/adaptive-limit.md,
	// "Knee").
	Knee
)

// defaultInitialLimit is the built-in InitialLimit, kept within MinLimit and MaxLimit.
const defaultInitialLimit = 20

// defaultAlgorithm is the built-in default of AdaptiveLimitConfig.Algorithm.
const defaultAlgorithm = Gradient2

// String returns the algorithm's configuration name: "gradient2", "aimd", "vegas" or "knee" (""
// when unset).
func (a LimitAlgorithm) String() string {
	if a == 0 {
		return ""
	}
	if a.valid() {
		return algorithms[a].name
	}
	return "LimitAlgorithm(" + strconv.Itoa(int(a)) + ")"
}

// valid reports whether a is one of the algorithms.
func (a LimitAlgorithm) valid() bool {
	return int(a) < len(algorithms) && algorithms[a].build != nil
}

// parseAlgorithm returns the algorithm of a configuration name, in any case.
func parseAlgorithm(text string) (LimitAlgorithm, bool) {
	for a, info := range algorithms {
		if info.build != nil && strings.EqualFold(text, info.name) {
			return LimitAlgorithm(a), true
		}
	}
	return 0, false
}

// algorithmNames lists the configuration names of the algorithms: "gradient2, aimd, vegas or
// knee".
func algorithmNames() string { return listAlgorithms(func(n string) string { return n }, " or ") }

// listAlgorithms lists the configuration names of the algorithms, each through format, the last
// two joined by conj: "gradient2, aimd, vegas or knee".
func listAlgorithms(format func(name string) string, conj string) string {
	var names []string
	for _, info := range algorithms {
		if info.build != nil {
			names = append(names, format(info.name))
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + conj + names[len(names)-1]
}

// smoothingDefault describes the built-in default of Smoothing, which depends on the algorithm:
// "0.2 (1.0 under vegas)".
func smoothingDefault() string {
	base := algorithms[defaultAlgorithm].smoothing
	text := formatDecimal(base)
	var others []string
	for _, info := range algorithms {
		if info.build != nil && info.smoothing != base {
			others = append(others, formatDecimal(info.smoothing)+" under "+info.name)
		}
	}
	if len(others) > 0 {
		text += " (" + strings.Join(others, ", ") + ")"
	}
	return text
}

// formatDecimal formats v with at least one digit after the point: 1.0, 0.2.
func formatDecimal(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// Toggle is an on/off setting whose zero value means "not set here", so that a later layer of
// configuration can both disable and re-enable a policy (Enabled) or a feature of one
// (AdaptiveLimitConfig.DropGuard).
type Toggle uint8

// The values of a Toggle.
const (
	// On enables the policy or the feature (the default of every Toggle setting).
	On Toggle = iota + 1
	// Off disables it. A policy turned off lets every call pass and measures nothing.
	Off
)

// String returns "true", "false" or "" when unset, as in configuration values.
func (t Toggle) String() string {
	switch t {
	case On:
		return "true"
	case Off:
		return "false"
	case 0:
		return ""
	}
	return "Toggle(" + strconv.Itoa(int(t)) + ")"
}

// NoQueue is the value of AdaptiveLimitConfig.QueueSize for a queue of size zero: the zero
// value of the field means "not set here".
const NoQueue = -1

// AdaptiveLimitConfig configures an adaptive concurrency limit. A zero field means
// "not set here": the next layer's value applies, down to the built-in defaults shown below.
type AdaptiveLimitConfig struct {
	// Algorithm is Gradient2 (default), AIMD, Vegas or Knee.
	Algorithm LimitAlgorithm
	// InitialLimit is the limit before the first window completes (default 20, kept within
	// MinLimit and MaxLimit: MaxLimit 10 alone means InitialLimit 10).
	InitialLimit int
	// MinLimit is the lowest the limit goes (default 1).
	MinLimit int
	// MaxLimit is the highest the limit goes (default 200).
	MaxLimit int
	// Window is the minimum duration of a window (default 1s; 1ms to 1h). Knee alone may end
	// a window sooner: the one that follows a fast growth of its limit, the one before a
	// drain, which ends on the drain grid's boundary, and one whose drops, after a growth,
	// already show overload (docs/adaptive-limit.md, Knee).
	Window time.Duration
	// MinWindowSamples is the minimum number of samples of a window (default 10).
	MinWindowSamples int
	// Smoothing is the share of each window's proposed limit that the estimate moves towards
	// (Gradient2 and Vegas), in (0, 1]. Its default depends on the algorithm: 0.2, and 1.0 under
	// Vegas (no smoothing, as in Netflix's VegasLimit). A resolved configuration (Config of a
	// handle) holds the effective value.
	Smoothing float64
	// RTTTolerance is how much above the long-term latency Gradient2 tolerates, >= 1 (default 1.5).
	RTTTolerance float64
	// LongWindow is the number of windows of Gradient2's long-term average (default 600). It
	// counts windows, not time: with a shorter Window the average forgets sooner.
	LongWindow int
	// QueueSize is Gradient2's growth allowance per window before smoothing (default 4). Use
	// NoQueue for zero.
	QueueSize int
	// BackoffRatio is AIMD's multiplier after a window with a drop, in (0, 1) (default 0.9).
	BackoffRatio float64
	// Alpha is the estimated queue below which Vegas grows the limit by log10 of the limit, at
	// least 1. Zero (the default) uses Netflix's function 3 x log10(limit), where log10 is
	// floored and at least 1. When Beta is set too, Alpha <= Beta.
	Alpha int
	// Beta is the estimated queue above which Vegas lowers the limit by log10 of the limit, and
	// the step by which it grows when there is almost no queue, at least 1. Zero (the default)
	// uses Netflix's function 6 x log10(limit).
	Beta int
	// ProbeMultiplier sets how often Vegas forgets its no-load latency and measures it again:
	// about every ProbeMultiplier x limit windows (times a jitter in [0.5, 1)), at least 1
	// (default 30).
	ProbeMultiplier int
	// DropOn lists the failures that are drops (matched with errors.Is). Default:
	// ErrCallTimeout, ErrBulkheadFull. Setting it replaces the default list; a non-nil empty
	// slice means no failure is a drop.
	DropOn []error
	// DropGuard (Gradient2 only; default On) keeps a timeout inside the limit from teaching
	// Gradient2 that overload is normal: a window in which more than one sample in ten is a drop
	// lowers the limit as Gradient2 does with its gradient at the floor (0.5), and stays out of
	// the long-term latency. Off feeds every window to Gradient2's Update, as Netflix's library
	// does. AIMD, Vegas and Knee ignore it.
	DropGuard Toggle
	// MaxWait is how long a call that finds every slot taken waits for one (default 0: it is
	// rejected at once). A waiting call is admitted by the call that frees a slot (or by a
	// window that raises the limit), highest priority first and in arrival order within a
	// priority (WithPriority); it waits on the registry's clock, never past its context's
	// deadline, and fails with the limit's rejection when the wait is over. Its latency sample
	// starts when it gets its slot. Use NoWait to remove a wait set by a lower layer.
	MaxWait time.Duration
	// MaxWaiting bounds the calls waiting at once (default: the current limit). A call that
	// finds the queue full is rejected at once, unless a waiting call has a lower priority: the
	// newest of the lowest priority then gives it its place and fails at once.
	MaxWaiting int
	// Partitions guarantees shares of the limit to classes of calls, tagged with WithPartition
	// (each share in (0, 1], the shares adding up to at most 1): a partition's calls up to
	// floor(share x limit) are always admitted, whatever the others do; beyond that, and calls
	// without a partition, they use only the slots that no guarantee reserves, so the calls in
	// flight never exceed the limit. A partition that is idle keeps its guarantee free for its
	// next calls: that is the price of the guarantee (docs/adaptive-limit.md, "Partitions").
	Partitions map[string]float64
	// Enabled turns the limit Off (every call passes, nothing is measured) or back On.
	Enabled Toggle
	// Config names a configuration registered with WithConfig to start from.
	Config string
}

// policyName returns "adaptiveLimit".
func (AdaptiveLimitConfig) policyName() string { return policyAdaptiveLimit }

func (c AdaptiveLimitConfig) addTo(l layer, scope string, named bool) error {
	return addToLayer(&adaptiveLimitSpec, c, l, scope, named)
}

func (c AdaptiveLimitConfig) namedConfig() string { return c.Config }

const policyAdaptiveLimit = "adaptiveLimit"

const (
	minWindow = time.Millisecond
	maxWindow = time.Hour
)

// queueSize returns QueueSize with NoQueue mapped to zero.
func (c AdaptiveLimitConfig) queueSize() int {
	if c.QueueSize == NoQueue {
		return 0
	}
	return c.QueueSize
}

var adaptiveLimitSpec = policySpec[AdaptiveLimitConfig]{
	main:   "maxLimit",
	name:   policyAdaptiveLimit,
	kind:   KindAdaptiveLimit,
	goType: "r4c.AdaptiveLimitConfig",
	// Smoothing, Alpha and Beta have no fixed built-in default: complete fills Smoothing in by
	// algorithm once every layer is merged, and Alpha and Beta unset mean Netflix's functions.
	defaults: AdaptiveLimitConfig{
		Algorithm:        defaultAlgorithm,
		MinLimit:         1,
		MaxLimit:         200,
		Window:           time.Second,
		MinWindowSamples: 10,
		RTTTolerance:     1.5,
		LongWindow:       600,
		QueueSize:        4,
		BackoffRatio:     0.9,
		ProbeMultiplier:  30,
		DropOn:           []error{ErrCallTimeout, ErrBulkheadFull},
		DropGuard:        On,
		MaxWait:          NoWait,
		Enabled:          On,
	},
	settings: adaptiveLimitSettings,
	named:    func(c *AdaptiveLimitConfig) *string { return &c.Config },
	complete: func(c *AdaptiveLimitConfig) {
		if c.Smoothing == 0 && c.Algorithm.valid() {
			c.Smoothing = algorithms[c.Algorithm].smoothing
		}
		if c.InitialLimit == 0 {
			// A default yields to the limits set around it; limits set explicitly out of
			// order stay an error (relate).
			c.InitialLimit = max(c.MinLimit, min(defaultInitialLimit, c.MaxLimit))
		}
	},
	relate: func(c *AdaptiveLimitConfig, scope string, from func(string) string) error {
		// have writes "key value (where it came from)".
		have := func(key string, v int) string {
			if f := from(key); f != "" {
				return fmt.Sprintf("%s %d (%s)", key, v, f)
			}
			return fmt.Sprintf("%s %d", key, v)
		}
		if c.MinLimit > c.InitialLimit || c.InitialLimit > c.MaxLimit {
			return &ConfigError{Code: codeOutOfOrder, Instance: scopeID(scope), Policy: policyAdaptiveLimit, Key: "initialLimit",
				Value: strconv.Itoa(c.InitialLimit),
				Msg: fmt.Sprintf("%sadaptiveLimit limits out of order: want minLimit <= initialLimit <= maxLimit, have %s, %s, %s",
					scopePrefix(scope), have("minLimit", c.MinLimit), have("initialLimit", c.InitialLimit), have("maxLimit", c.MaxLimit))}
		}
		if c.Alpha != 0 && c.Beta != 0 && c.Alpha > c.Beta {
			return &ConfigError{Code: codeOutOfOrder, Instance: scopeID(scope), Policy: policyAdaptiveLimit, Key: "alpha",
				Value: strconv.Itoa(c.Alpha),
				Msg: fmt.Sprintf("%sadaptiveLimit alpha and beta out of order: want alpha <= beta, have %s, %s",
					scopePrefix(scope), have("alpha", c.Alpha), have("beta", c.Beta))}
		}
		return nil
	},
}

var adaptiveLimitSettings = []setting[AdaptiveLimitConfig]{
	{
		key: "algorithm", valid: algorithmNames(), doc: "The algorithm that computes the limit from each window.",
		format: func(c *AdaptiveLimitConfig) string { return c.Algorithm.String() },
		isSet:  func(c *AdaptiveLimitConfig) bool { return c.Algorithm != 0 },
		copy:   func(d, s *AdaptiveLimitConfig) { d.Algorithm = s.Algorithm },
		check: func(c *AdaptiveLimitConfig) (string, bool) {
			return codeInvalidSetting, c.Algorithm.valid()
		},
		parse: func(c *AdaptiveLimitConfig, text string) (string, string, bool) {
			a, ok := parseAlgorithm(text)
			if !ok {
				return codeInvalidValue, algorithmNames(), false
			}
			c.Algorithm = a
			return "", "", true
		},
		example: "aimd",
	},
	intSetting("initialLimit", "at least 1, and minLimit <= initialLimit <= maxLimit",
		func(c *AdaptiveLimitConfig) *int { return &c.InitialLimit }, atLeastOne, codeLimitBelowOne).eg("15").describe("The limit before the first window completes.").
		defaultIs("20, within minLimit and maxLimit"),
	intSetting("minLimit", "at least 1",
		func(c *AdaptiveLimitConfig) *int { return &c.MinLimit }, atLeastOne, codeLimitBelowOne).eg("2").describe("The lowest the limit goes."),
	intSetting("maxLimit", "at least 1, and at least minLimit",
		func(c *AdaptiveLimitConfig) *int { return &c.MaxLimit }, atLeastOne, codeLimitBelowOne).eg("150").describe("The highest the limit goes."),
	durationSetting("window", "from 1ms to 1h",
		func(c *AdaptiveLimitConfig) *time.Duration { return &c.Window },
		func(d time.Duration) bool { return d >= minWindow && d <= maxWindow }, codeOutOfOrder).eg("500ms").describe("The minimum duration of a window; a window also needs minWindowSamples samples. Knee alone may end a window sooner: after a fast growth of its limit, before a drain (on the drain grid's boundary), and when, after a growth or once its base is confirmed, its drops already show overload."),
	intSetting("minWindowSamples", "at least 1",
		func(c *AdaptiveLimitConfig) *int { return &c.MinWindowSamples }, atLeastOne, codeInvalidSetting).eg("20").describe("The minimum number of samples of a window; a window over with fewer is extended by one window."),
	floatSetting("smoothing", "in (0, 1]",
		func(c *AdaptiveLimitConfig) *float64 { return &c.Smoothing }, func(v float64) bool { return v > 0 && v <= 1 }).eg("0.5").describe("Gradient2 and Vegas: the share of each window's proposed limit that the estimate moves towards.").
		defaultIs(smoothingDefault()),
	floatSetting("rttTolerance", "at least 1",
		func(c *AdaptiveLimitConfig) *float64 { return &c.RTTTolerance }, func(v float64) bool { return v >= 1 && v < inf }).eg("2").describe("Gradient2: how far above the long-term latency a window may be before the limit falls; the limit settles where queueing raises latency about this much."),
	intSetting("longWindow", "at least 1",
		func(c *AdaptiveLimitConfig) *int { return &c.LongWindow }, atLeastOne, codeInvalidSetting).eg("100").describe("Gradient2: the number of windows (not a duration) of the long-term latency average: its memory is about longWindow x window."),
	intSetting("queueSize", "at least 0 (NoQueue, -1, for 0 in Go code)",
		func(c *AdaptiveLimitConfig) *int { return &c.QueueSize },
		func(v int) bool { return v >= 0 || v == NoQueue }, codeInvalidSetting).eg("0").describe("Gradient2: the growth allowance added each window before smoothing.").
		zeroAs(func(c *AdaptiveLimitConfig) bool { return c.QueueSize == 0 }, func(c *AdaptiveLimitConfig) { c.QueueSize = NoQueue }),
	floatSetting("backoffRatio", "in (0, 1)",
		func(c *AdaptiveLimitConfig) *float64 { return &c.BackoffRatio }, func(v float64) bool { return v > 0 && v < 1 }).eg("0.8").describe("AIMD: the multiplier applied to the limit after a window with a drop."),
	intSetting("alpha", "at least 1, and at most beta when both are set",
		func(c *AdaptiveLimitConfig) *int { return &c.Alpha }, atLeastOne, codeInvalidSetting).eg("3").
		describe("Vegas: the estimated queue below which the limit grows by log10(limit); unset, 3 x log10(limit), log10 floored and at least 1.").
		defaultIs("3 x log10(limit)"),
	intSetting("beta", "at least 1, and at least alpha when both are set",
		func(c *AdaptiveLimitConfig) *int { return &c.Beta }, atLeastOne, codeInvalidSetting).eg("6").
		describe("Vegas: the estimated queue above which the limit falls by log10(limit), and the step it grows by when there is almost no queue; unset, 6 x log10(limit).").
		defaultIs("6 x log10(limit)"),
	intSetting("probeMultiplier", "at least 1",
		func(c *AdaptiveLimitConfig) *int { return &c.ProbeMultiplier }, atLeastOne, codeInvalidSetting).eg("60").
		describe("Vegas: the no-load latency is measured again about every jitter x probeMultiplier x limit windows, with a deterministic jitter in [0.5, 1)."),
	errorsSetting("dropOn", "a list of errors, matched with errors.Is; no nil entries",
		func(c *AdaptiveLimitConfig) *[]error { return &c.DropOn }).eg("r4c.ErrCallTimeout,net.ErrClosed").describe("The failures that are drops (overload signals); setting it replaces the default list."),
	boolSetting("dropGuard", func(c *AdaptiveLimitConfig) *Toggle { return &c.DropGuard },
		"Gradient2 only: a window in which more than one sample in ten is a drop lowers the limit as if the gradient were at its floor (0.5) and stays out of the long-term latency, so that timeouts never become normal; false is Netflix's Gradient2 end to end."),
	waitSetting("maxWait", func(c *AdaptiveLimitConfig) *time.Duration { return &c.MaxWait }).eg("50ms").
		describe("How long a call that finds every slot taken waits for one, highest priority first; 0 rejects it at once."),
	intSetting("maxWaiting", "at least 1",
		func(c *AdaptiveLimitConfig) *int { return &c.MaxWaiting }, atLeastOne, codeInvalidSetting).eg("100").
		describe("With maxWait: how many calls may wait at once; beyond it a call is rejected at once, or takes the place of a waiting call of lower priority.").
		defaultIs("the current limit"),
	partitionsSetting().defaultIs("none"),
	toggleSetting(func(c *AdaptiveLimitConfig) *Toggle { return &c.Enabled },
		"false disables the limit: every call passes and nothing is measured."),
}

// String writes the configuration as its keys and values, as docs/configuration.md documents
// them ("adaptiveLimit{...}"); settings not set are left out.
func (c AdaptiveLimitConfig) String() string { return adaptiveLimitSpec.text(c) }
