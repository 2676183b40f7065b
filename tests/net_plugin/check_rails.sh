#!/usr/bin/env bash
# Runs COMMAND (a hetccl-perf check over the net transport with the stand-in
# plugin, which reports HETCCL_TEST_NET_DEVICES devices) with the NET log on,
# and checks that every one of the devices carried bytes: the stand-in says
# at close how many bytes each connection's device moved. Prints the
# command's output; exits non-zero, naming what is missing, otherwise.
#
#   check_rails.sh COMMAND [ARGS...]
set -uo pipefail

devices=${HETCCL_TEST_NET_DEVICES:?set HETCCL_TEST_NET_DEVICES}
log=$(HETCCL_DEBUG=INFO HETCCL_DEBUG_SUBSYS=NET "$@" 2>&1)
status=$?
printf '%s\n' "$log"
if [[ $status -ne 0 ]]; then
  echo "check_rails: the command failed (status $status)"
  exit 1
fi
grep -q 'Out of bounds values : 0 OK' <<<"$log" || {
  echo "check_rails: no passing check in the output"
  exit 1
}
for ((dev = 0; dev < devices; ++dev)); do
  for way in sent received; do
    grep -Eq "stand-in: device $dev $way [1-9][0-9]* bytes" <<<"$log" || {
      echo "check_rails: device $dev $way nothing"
      exit 1
    }
  done
done
echo "check_rails: all $devices devices carried bytes both ways"
