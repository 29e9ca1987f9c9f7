#!/bin/bash
# Interleaved rounds of prebuilt test binaries, -count 1 each, 8 rounds, for the metrics issue:
# 1. the engine, the pipeline and the policies before the metric counters (53b96de) and after
#    them, old then new in each round, so that the two versions of a benchmark are measured
#    about half a minute apart, in every round;
# 2. r4cprom's BenchmarkEngineWhileScraped (all five settings in each round).
# Build them first:
#   git worktree add /tmp/oldtree 53b96de
#   (cd /tmp/oldtree && go test -c -o /tmp/core_old.test . && cd benchmarks && go test -c -o /tmp/peer_old.test .)
#   go test -c -o /tmp/core_new.test . && (cd benchmarks && go test -c -o /tmp/peer_new.test .)
#   (cd r4cprom && go test -c -o /tmp/prom.test .)
for i in 1 2 3 4 5 6 7 8; do
  for v in old new; do
    /tmp/core_$v.test -test.run '^$' -test.bench '^Benchmark(Engine|Pipeline)$' \
      -test.benchmem -test.count 1 -test.cpu 1,2 -test.benchtime 300ms 2>&1 | grep "^Benchmark" | sed "s/^/core $v round$i /"
    /tmp/peer_$v.test -test.run '^$' -test.bench 'BenchmarkPolicies/^(adaptivelimit|retry|breaker|hedge)$/^r4c$' \
      -test.benchmem -test.count 1 -test.cpu 1 -test.benchtime 300ms 2>&1 | grep "^Benchmark" | sed "s/^/peer $v round$i /"
  done
  /tmp/prom.test -test.run '^$' -test.bench 'BenchmarkEngineWhileScraped' \
    -test.benchmem -test.count 1 -test.benchtime 500ms 2>&1 | grep "^Benchmark" | sed "s/^/prom round$i /"
done
