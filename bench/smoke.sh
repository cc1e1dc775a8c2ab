#!/bin/sh
# bench_smoke (ctest): runs every benchmark suite for a moment to prove it
# still works; timings are ignored. Usage:
#   smoke.sh BENCH_BINARY... [--rss BENCH_ASYNC_RSS_BINARY]
set -eu
status=0
while [ $# -gt 0 ]; do
  if [ "$1" = "--rss" ]; then
    echo "== $2 --submissions 2000"
    "$2" --submissions 2000 || status=1
    shift 2
    continue
  fi
  echo "== $1"
  "$1" --benchmark_min_time=0.01 || status=1
  shift
done
exit $status
