#!/bin/sh
# Build the .usdb reader fuzzer with clang and run it for a bounded time.
#   tests/fuzz/run.sh SECONDS [WORKDIR]
# Seeds: every tests/fixtures layer converted at levels 0 and 3 (needs a
# built usdbake; set USDBAKE=path, default ./usdbake).
set -eu
secs=${1:-60}
work=${2:-${TMPDIR:-/tmp}/usdbake-fuzz}
src=$(cd "$(dirname "$0")/../.." && pwd)
usdbake=${USDBAKE:-./usdbake}
CLANG=${CLANG:-clang}
mkdir -p "$work/corpus" "$work/seeds"
$CLANG -std=c11 -g -O1 -DUB_USDB_FUZZING -D_POSIX_C_SOURCE=200809L \
    -D_DEFAULT_SOURCE -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined \
    -I"$src/runtime" -I"$src/backend" \
    "$src/tests/fuzz/fuzz_usdb.c" "$src/backend/ub_usdb_write.c" \
    "$src"/runtime/ub_arena.c "$src"/runtime/ub_intern.c \
    "$src"/runtime/ub_diag.c "$src"/runtime/ub_value.c \
    "$src"/runtime/ub_layer.c "$src"/runtime/ub_buf.c \
    "$src"/runtime/ub_usdb_read.c "$src"/runtime/ub_usdb_interp.c \
    -lzstd -lxxhash -lm -o "$work/fuzz_usdb"
i=0
for f in $(find "$src/tests/fixtures" -name '*.usda' | sort); do
    for lv in 0 3; do
        "$usdbake" convert --level $lv "$f" -o "$work/seeds/s$i-$lv.usdb" \
            2>/dev/null || true
    done
    i=$((i + 1))
done
cd "$work"
./fuzz_usdb -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 corpus seeds
