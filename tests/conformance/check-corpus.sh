#!/bin/sh
# make check: run the conformance corpus and fail when a run listed in
# passing.txt no longer passes at its listed level.  Failures of runs not
# on the list are reported but do not fail the build: the list only grows.
# Without the corpus the test is reported as skipped (exit 77).
out=$(./tests/conformance/run --summary \
    --check-passing "${srcdir:-.}/tests/conformance/passing.txt")
rc=$?
printf '%s\n' "$out"
case $out in skipped:*) exit 77 ;; esac
exit $rc
