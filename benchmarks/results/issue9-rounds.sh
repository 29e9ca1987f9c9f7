#!/bin/bash
# Interleaved rounds of prebuilt test binaries, -count 1 each, 8 rounds: the core and the peer
# benchmarks before the native async driver and cheaper timeout (a449869) and after them. Each
# round runs old then new of each, so that the two versions of a benchmark are measured about a
# minute apart, in every round. Build them first (BenchmarkAsync copied into the old trees):
#   git worktree add /tmp/oldtree a449869
#   sed -n '/---------- Asynchronous calls/,$p' bench_test.go  # into /tmp/oldtree/async_bench_test.go, with its imports
#   cp benchmarks/async_test.go /tmp/oldtree/benchmarks/
#   (cd /tmp/oldtree && go test -c -o /tmp/core_old.test . && cd benchmarks && go test -c -o /tmp/peer_old.test .)
#   go test -c -o /tmp/core_new.test . && (cd benchmarks && go test -c -o /tmp/peer_new.test .)
for i in 1 2 3 4 5 6 7 8; do
  for v in old new; do
    /tmp/core_$v.test -test.run '^$' -test.bench '^Benchmark(Floor|Engine|EngineReject|Pipeline|Async)$' \
      -test.benchmem -test.count 1 -test.cpu 1,2 -test.benchtime 500ms 2>&1 | grep "^Benchmark" | sed "s/^/core $v round$i /"
    /tmp/peer_$v.test -test.run '^$' -test.bench '^BenchmarkAsync$' \
      -test.benchmem -test.count 1 -test.cpu 1,2 -test.benchtime 300ms 2>&1 | grep "^Benchmark" | sed "s/^/peer $v round$i /"
  done
done
# Then the policies, in the same way (a -test.bench pattern is matched level by level, split at
# each slash):
for i in 1 2 3 4 5 6 7 8; do
  for v in old new; do
    /tmp/peer_$v.test -test.run '^$' -test.bench 'BenchmarkPolicies/^(direct|adaptivelimit|timeout|stack)$' \
      -test.benchmem -test.count 1 -test.cpu 1,2 -test.benchtime 300ms 2>&1 | grep "^Benchmark" | sed "s/^/peer $v round$i /"
  done
done
