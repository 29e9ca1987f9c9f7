#!/bin/bash
# Interleaved rounds of two prebuilt core test binaries, -count 1 each, 6 rounds: the engine
# before the Knee/Vegas/drop-guard work (5e192b7) and after it. Build them first:
#   git worktree add /tmp/oldtree 5e192b7 && (cd /tmp/oldtree && go test -c -o /tmp/bench_old.test .)
#   go test -c -o /tmp/bench_new.test .
for i in 1 2 3 4 5 6; do
  for v in old new; do
    /tmp/bench_$v.test -test.run '^$' -test.bench '^Benchmark(Floor|Engine|EngineReject|Pipeline)$' \
      -test.benchmem -test.count 1 -test.cpu 1,2 2>&1 | grep "^Benchmark" | sed "s/^/$v round$i /"
  done
done
