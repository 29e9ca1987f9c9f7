package r4c

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
)

type partitionKey struct{}

// WithPartition returns a context that tags the calls made with it as partition name's, for the
// adaptive limits that have that partition (AdaptiveLimitConfig.Partitions). A limit without it
// treats the call as having no partition.
func WithPartition(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, partitionKey{}, name)
}

// partition is one partition of an adaptive limit: its guaranteed share and its counts.
type partition struct {
	name     string
	share    float64
	inFlight atomic.Int64
	rejected atomic.Int64
}

// PartitionSnapshot is a reading of one partition of an adaptive limit.
type PartitionSnapshot struct {
	Name string
	// Share is the partition's guaranteed share of the limit, and Guaranteed the slots it
	// guarantees now: floor(Share x Limit).
	Share      float64
	Guaranteed int
	InFlight   int
	Rejected   int64
}

// newPartitions returns the partitions of a configuration, sorted by name; nil without any.
func newPartitions(shares map[string]float64) []partition {
	if len(shares) == 0 {
		return nil
	}
	names := make([]string, 0, len(shares))
	for n := range shares {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]partition, len(names))
	for i, n := range names {
		parts[i].name, parts[i].share = n, shares[n]
	}
	return parts
}

// partitionOf returns ctx's partition as index + 1, or 0 (none, or one this limit does not
// have). It costs a context lookup: only limits with partitions call it.
func (l *AdaptiveLimitHandle) partitionOf(ctx context.Context) int32 {
	name, ok := ctx.Value(partitionKey{}).(string)
	if !ok {
		return 0
	}
	for i := range l.parts {
		if l.parts[i].name == name {
			return int32(i + 1)
		}
	}
	return 0
}

// guaranteed is the number of slots a partition of share guarantees under limit.
func guaranteed(share float64, limit int64) int64 { return int64(share * float64(limit)) }

// takePartitioned takes a slot for a call of partition part (0: none; partition i is i+1) of a limit with
// partitions. A call within its partition's guarantee is always admitted; any other call (a
// partition beyond its guarantee, or a call without one) borrows only what no guarantee
// reserves: it is admitted when the calls in flight plus the guaranteed slots not in use stay
// under the limit. So the calls in flight never exceed the limit (those admitted before a
// window lowered it aside), and every partition can always reach its guarantee. pmu
// serializes the decisions; releases only lower the counts, which can only make a decision
// more cautious, so they take no lock.
func (l *AdaptiveLimitHandle) takePartitioned(part int32) bool {
	l.pmu.Lock()
	defer l.pmu.Unlock()
	limit := l.limit.Load()
	if part > 0 {
		p := &l.parts[part-1]
		if p.inFlight.Load() < guaranteed(p.share, limit) {
			p.inFlight.Add(1)
			l.countIn()
			return true
		}
	}
	var reserved int64
	for i := range l.parts {
		if r := guaranteed(l.parts[i].share, limit) - l.parts[i].inFlight.Load(); r > 0 {
			reserved += r
		}
	}
	if l.inFlight.Load()+reserved >= limit {
		return false
	}
	if part > 0 {
		l.parts[part-1].inFlight.Add(1)
	}
	l.countIn()
	return true
}

// countIn counts an admitted call in the limit's total.
func (l *AdaptiveLimitHandle) countIn() {
	if n := l.inFlight.Add(1); n > l.maxInFlight.Load() {
		l.raiseMaxInFlight(n)
	}
}

// partitionRejected counts a rejection of a partition's call.
func (l *AdaptiveLimitHandle) partitionRejected(part int32) {
	if part > 0 {
		l.parts[part-1].rejected.Add(1)
	}
}

// partitionSnapshots reads the partitions, with their guarantees under limit.
func (l *AdaptiveLimitHandle) partitionSnapshots(limit int64) []PartitionSnapshot {
	if l.parts == nil {
		return nil
	}
	out := make([]PartitionSnapshot, len(l.parts))
	for i := range l.parts {
		p := &l.parts[i]
		out[i] = PartitionSnapshot{Name: p.name, Share: p.share, Guaranteed: int(guaranteed(p.share, limit)),
			InFlight: int(p.inFlight.Load()), Rejected: p.rejected.Load()}
	}
	return out
}

// partitionsSetting is the "partitions" setting: name:share pairs, each share in (0, 1], the
// shares adding up to at most 1. External configuration also takes one key per partition
// (adaptiveLimit.partitions.<name>=0.3).
func partitionsSetting() setting[AdaptiveLimitConfig] {
	f := func(c *AdaptiveLimitConfig) *map[string]float64 { return &c.Partitions }
	return setting[AdaptiveLimitConfig]{
		key:   "partitions",
		valid: "name:share pairs separated by commas, each share in (0, 1], the shares adding up to at most 1",
		doc:   "Guaranteed shares of the limit, by partition (WithPartition): a partition's calls up to its share of the limit are always admitted; beyond it, and calls without a partition, they use what no guarantee reserves.",
		format: func(c *AdaptiveLimitConfig) string {
			return formatPartitions(*f(c))
		},
		isSet: func(c *AdaptiveLimitConfig) bool { return *f(c) != nil },
		copy: func(d, s *AdaptiveLimitConfig) {
			*f(d) = nil
			if *f(s) != nil {
				*f(d) = make(map[string]float64, len(*f(s)))
				for k, v := range *f(s) {
					(*f(d))[k] = v
				}
			}
		},
		check: func(c *AdaptiveLimitConfig) (string, bool) {
			sum := 0.0
			for name, share := range *f(c) {
				if name == "" || strings.ContainsAny(name, ":,") || !(share > 0 && share <= 1) {
					return codeInvalidSetting, false
				}
				sum += share
			}
			return codeInvalidSetting, sum <= 1+1e-9
		},
		equal: func(a, b *AdaptiveLimitConfig) bool {
			return formatPartitions(*f(a)) == formatPartitions(*f(b))
		},
		parse: func(c *AdaptiveLimitConfig, text string) (string, string, bool) {
			m := map[string]float64{}
			for _, pair := range strings.Split(text, ",") {
				if pair = strings.TrimSpace(pair); pair == "" {
					continue
				}
				name, share, ok := strings.Cut(pair, ":")
				v, err := strconv.ParseFloat(strings.TrimSpace(share), 64)
				if !ok || err != nil || strings.TrimSpace(name) == "" {
					return codeInvalidValue, "name:share pairs such as interactive:0.6,batch:0.3", false
				}
				m[strings.TrimSpace(name)] = v
			}
			*f(c) = m
			return "", "", true
		},
		example: "interactive:0.6,batch:0.3",
	}
}

// formatPartitions writes shares as "a:0.3,b:0.6", sorted by name ("" for none).
func formatPartitions(m map[string]float64) string {
	if m == nil {
		return ""
	}
	pairs := make([]string, 0, len(m))
	for name, share := range m {
		pairs = append(pairs, name+":"+strconv.FormatFloat(share, 'g', -1, 64))
	}
	slices.Sort(pairs)
	return strings.Join(pairs, ",")
}

// partitionEntry turns the flat key of one partition (adaptiveLimit.partitions.<name>=share) into
// the partitions text of its layer: the entries the layer has, with this one added.
func partitionEntry(l layer, name, value string) string {
	prev, _ := l[policyAdaptiveLimit].(AdaptiveLimitConfig)
	text := formatPartitions(prev.Partitions)
	if text != "" {
		text += ","
	}
	return text + name + ":" + value
}
