#!/usr/bin/env bash
# ws_bench.sh — the websocket server against the same graph over stdin, and its memory with
# idle connections; prints one JSON line per measurement (bench/RESULTS.md has the figures).
#
#   bash bench/ws_bench.sh BUILD_DIR MODEL_DIR [SECONDS] [CLIENTS]
#
# The pizza bot twice, with the same NLU settings (cpu, max_batch 64, max_queue_delay_us
# 1000, as bench/pipeline_pizza.yaml) and a fresh SQLite store each: samples/pizza/
# pipeline.yaml (text.stdin/text.stdout) and samples/pizza/server.yaml (ws.server). For each:
# 1 client, then CLIENTS (1000) in a closed loop, SECONDS (5) each after 1 s of warm-up
# (bench/ws_bench.c). Then a fresh server holds CLIENTS idle connections for 10 s and its
# resident memory is read before and with them. Run from the repository root.
set -euo pipefail
build=${1:?usage: ws_bench.sh BUILD_DIR MODEL_DIR [SECONDS] [CLIENTS]}
model=${2:?usage: ws_bench.sh BUILD_DIR MODEL_DIR [SECONDS] [CLIENTS]}
seconds=${3:-5}
clients=${4:-1000}
parley=$build/sdk/cli/parley
bench=$build/bench/ws_bench
tmp=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
ulimit -n "$(ulimit -Hn)" # a thousand connections on each side

sets() { # the settings both graphs share, with a store of their own ($1)
    echo --set nlu.model="$model" --set dialog.model="$model" --set dialog.store="$tmp/$1.db" \
        --set nlu.device=cpu --set nlu.max_batch=64 --set nlu.max_queue_delay_us=1000
}

start_server() { # start_server NAME: a fresh server; sets $server (pid) and $url
    : >"$tmp/$1.log" # there before the server opens it, for the loop below
    # shellcheck disable=SC2046
    "$parley" run samples/pizza/server.yaml $(sets "$1") --set ws.server.port=0 \
        --set ws.server.max_connections=$((clients + 100)) 2>"$tmp/$1.log" &
    server=$!
    url=
    for _ in $(seq 600); do
        url=$(sed -n 's|.*listening on \(ws://[^ ]*/\).*|\1|p' "$tmp/$1.log")
        [ -n "$url" ] && return 0
        sleep 0.1
    done
    echo "ws_bench.sh: the server did not start:" >&2
    cat "$tmp/$1.log" >&2
    exit 1
}

stop_server() {
    kill "$server"
    wait "$server" || true
    server=
}

for n in 1 "$clients"; do
    # shellcheck disable=SC2046
    "$bench" stdin "$n" "$seconds" 1 -- "$parley" -q run samples/pizza/pipeline.yaml \
        $(sets "stdin$n")
done
for n in 1 "$clients"; do
    start_server "ws$n"
    "$bench" ws "$url" "$n" "$seconds" 1 "$server"
    stop_server
done
start_server idle
"$bench" idle "$url" "$clients" 10 "$server"
stop_server
