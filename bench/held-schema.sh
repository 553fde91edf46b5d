#!/usr/bin/env bash
# A replica started while another session holds the schema's version table (issue 36):
#   npm run build && bench/held-schema.sh [postgres://user:password@127.0.0.1:5432/db] [seconds=15]
# A first `memctx serve` makes a new schema and stops; a psql session then holds
# `<schema>.memctx_schema` in ACCESS EXCLUSIVE mode for `seconds`; a second `memctx serve`, with the
# default statement and lock timeouts, starts one second into the hold. Prints whether it came up
# and after how long, and what it said. The schema is dropped afterwards.
set -u
cd "$(dirname "$0")/.."
url_base=${1:-postgres://memctx_ci:memctx_ci@127.0.0.1:5432/memctx_ci}
hold=${2:-15}
schema="held_$$"
url="$url_base?schema=$schema"
node=node_modules/.bin/node
dir=$(mktemp -d)
log1=$(mktemp); log2=$(mktemp)
trap 'rm -rf "$dir" "$log1" "$log2"' EXIT
wait_for() { # wait_for LOG PID: until it listens or exits
  until grep -q "listening" "$1" || ! kill -0 "$2" 2>/dev/null; do sleep 0.2; done
}
MEMCTX_API_KEY=mk_held_schema_key $node dist/cli/main.js serve --port 0 --data-dir "$dir" --database-url "$url" >"$log1" 2>&1 &
first=$!
wait_for "$log1" $first
kill $first; wait $first 2>/dev/null
psql "$url_base" -qAt -c "BEGIN; LOCK TABLE $schema.memctx_schema IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep($hold); COMMIT;" >/dev/null &
holder=$!
sleep 1
start=$(date +%s.%N)
MEMCTX_API_KEY=mk_held_schema_key $node dist/cli/main.js serve --port 0 --data-dir "$dir" --database-url "$url" >"$log2" 2>&1 &
second=$!
wait_for "$log2" $second
end=$(date +%s.%N)
if grep -q "listening" "$log2"; then outcome="came up"; else outcome="EXITED"; fi
echo "schema held ${hold} s from 1 s before the start: the replica $outcome after $(echo "$end - $start" | bc) s"
cat "$log2"
kill $second 2>/dev/null; wait $holder
psql "$url_base" -qAt -c "DROP SCHEMA $schema CASCADE" >/dev/null 2>&1
