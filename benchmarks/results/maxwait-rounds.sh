#!/bin/bash
# Interleaved rounds of prebuilt test binaries, -count 1 each, 8 rounds, for MaxWait: the engine,
# the pipeline and the generated wrapper before the wait queue (715ffdc, the parent of the
# MaxWait commit) and after it, old then new in each round. A call that does not wait must cost
# what it cost. Build them first:
#   git worktree add /tmp/headtree <parent commit>
#   (cd /tmp/headtree && go test -c -o /tmp/core_old.test . && cd examples && go test -c -o /tmp/ex_old.test ./orders/)
#   go test -c -o /tmp/core_new.test . && (cd examples && go test -c -o /tmp/ex_new.test ./orders/)
for i in 1 2 3 4 5 6 7 8; do
  for v in old new; do
    /tmp/core_$v.test -test.run '^$' -test.bench '^Benchmark(Engine|EngineReject|Pipeline)$' \
      -test.benchmem -test.count 1 -test.cpu 1,2 -test.benchtime 300ms 2>&1 | grep "^Benchmark" | sed "s/^/core $v round$i /"
    /tmp/ex_$v.test -test.run '^$' -test.bench '^BenchmarkWrapper$' \
      -test.benchmem -test.count 1 -test.cpu 1 -test.benchtime 300ms 2>&1 | grep "^Benchmark" | sed "s/^/peer $v round$i /"
  done
done
