#!/bin/bash
# Interleaved rounds of two prebuilt core test binaries, -count 1 each, 5 rounds: the engine
# before a window could end early at a drop (e27e9de, with this change's bench_test.go, which
# adds BenchmarkEngineDrop) and after it. Build them first:
#   git worktree add /tmp/oldtree e27e9de && cp bench_test.go /tmp/oldtree/ &&
#     (cd /tmp/oldtree && go test -c -o /tmp/bench_old.test .)
#   go test -c -o /tmp/bench_new.test .
for i in 1 2 3 4 5; do
  for v in old new; do
    /tmp/bench_$v.test -test.run '^$' -test.bench '^Benchmark(Engine|EngineReject|EngineDrop)$' \
      -test.benchmem -test.count 1 2>&1 | grep "^Benchmark" | sed "s/^/$v round$i /"
  done
done
