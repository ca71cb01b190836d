#!/bin/bash
# cluster.sh — the pizza bot as a small cluster on one machine, with no root services:
# PostgreSQL (initdb into a work folder, run as an unprivileged user, unix socket only),
# two parley replicas serving samples/pizza/server.yaml over websockets with their context
# in that PostgreSQL, HAProxy in front (each user pinned to a replica by consistent hashing
# of ?user=, health checks on /healthz) and Prometheus scraping both replicas' /metrics.
#
#   samples/cluster/cluster.sh start [WORK]   start everything (WORK: a new temp folder by
#                                             default) and print where it listens
#   samples/cluster/cluster.sh stop WORK      stop everything started in WORK, remove WORK
#   samples/cluster/cluster.sh run            start, wait for Ctrl-C, stop
#
# Environment: PARLEY (the parley binary; default: parley on PATH), MODEL (the pizza model,
# default models/pizza: `parley train --data samples/pizza/nlu.yaml --out models/pizza`),
# PORT (HAProxy, 8080), REPLICA_PORTS ("8771 8772"), PROM_PORT (9090; 0 = no Prometheus),
# PG_USER (who runs PostgreSQL when this runs as root; nobody). Clients connect to
# ws://127.0.0.1:$PORT/?user=ID and send {"config":{"user":ID}} (samples/cluster/client.py).
# samples/cluster/README.md says how this maps onto real machines.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PARLEY=${PARLEY:-parley}
MODEL=${MODEL:-$root/models/pizza}
PORT=${PORT:-8080}
REPLICA_PORTS=${REPLICA_PORTS:-"8771 8772"}
PROM_PORT=${PROM_PORT:-9090}
PG_USER=${PG_USER:-nobody}

die() { echo "cluster.sh: $*" >&2; exit 1; }

pg_bin() {
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    [ -x "$d/initdb" ] || die "no PostgreSQL server binaries (apt-get install postgresql)"
    echo "$d"
}

# Runs a command as the PostgreSQL user (as root) or as ourselves.
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u "$PG_USER" -- "$@"; else "$@"; fi; }

wait_http() { # URL SECONDS: until it answers 200
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        curl -fs -o /dev/null "$1" && return 0
        sleep 0.1
    done
    return 1
}

start_replica() { # WORK N PORT
    local work=$1 n=$2 port=$3
    # The store URI holds no password: libpq takes it from PGPASSWORD.
    PGPASSWORD=$(cat "$work/pg/password") "$PARLEY" run "$root/samples/pizza/server.yaml" \
        --set "ws.server.port=$port" \
        --set "nlu.bert.model=$MODEL" --set "dialog.model=$MODEL" \
        --set "dialog.store=$(cat "$work/store_uri")" \
        >>"$work/replica$n.log" 2>&1 &
    echo $! >"$work/replica$n.pid"
}

start() {
    local work=${1:-}
    [ -n "$work" ] || work=$(mktemp -d /tmp/parley-cluster-XXXXXX)
    mkdir -p "$work"
    chmod 711 "$work" # the PostgreSQL user must reach its folder inside
    [ -f "$MODEL/config.json" ] || die "no model at $MODEL (set MODEL, or train one: see the header)"
    command -v haproxy >/dev/null || die "no haproxy (apt-get install haproxy)"
    local bin
    bin=$(pg_bin)

    # PostgreSQL: its own folder, owned by the user that runs it; a random password.
    mkdir -p "$work/pg"
    head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$work/pg/password"
    [ "$(id -u)" = 0 ] && chown -R "$PG_USER" "$work/pg"
    chmod 700 "$work/pg"
    as_pg "$bin/initdb" -D "$work/pg/data" -U parley --pwfile="$work/pg/password" \
        -A scram-sha-256 -E UTF8 --locale=C >"$work/pg/initdb.log"
    as_pg "$bin/pg_ctl" -D "$work/pg/data" -l "$work/pg/log" -w \
        -o "-k $work/pg -c listen_addresses='' -c max_connections=100" start >/dev/null
    echo "postgresql://parley@/pizza?host=$work/pg" >"$work/store_uri"
    PGPASSWORD=$(cat "$work/pg/password") "$bin/psql" -XAtq \
        -d "postgresql://parley@/postgres?host=$work/pg" -c "CREATE DATABASE pizza"
    # The schema once, before the replicas (they would migrate it too, one at a time).
    PGPASSWORD=$(cat "$work/pg/password") "$PARLEY" store migrate "$(cat "$work/store_uri")"

    local n=0 servers="" targets="" p
    for p in $REPLICA_PORTS; do
        n=$((n + 1))
        start_replica "$work" "$n" "$p"
        servers+="    server r$n 127.0.0.1:$p check"$'\n'
        targets+="'127.0.0.1:$p', "
    done
    for p in $REPLICA_PORTS; do
        wait_http "http://127.0.0.1:$p/healthz" 60 || die "replica on port $p did not come up (see $work/replica*.log)"
    done

    sed -e "s/@PORT@/$PORT/" "$here/haproxy.cfg" >"$work/haproxy.cfg"
    printf '%s' "$servers" >>"$work/haproxy.cfg"
    haproxy -f "$work/haproxy.cfg" -p "$work/haproxy.pid" -D
    if [ "$PROM_PORT" != 0 ] && command -v prometheus >/dev/null; then
        sed -e "s/@TARGETS@/${targets%, }/" "$here/prometheus.yml" >"$work/prometheus.yml"
        prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prom" \
            --web.listen-address="127.0.0.1:$PROM_PORT" >"$work/prometheus.log" 2>&1 &
        echo $! >"$work/prometheus.pid"
    fi
    wait_http "http://127.0.0.1:$PORT/healthz" 10 || die "HAProxy did not come up"
    echo "$work"
    echo "cluster.sh: ws://127.0.0.1:$PORT/?user=ID (HAProxy), replicas on $REPLICA_PORTS," \
        "Prometheus on ${PROM_PORT}, work folder $work" >&2
}

stop() {
    local work=$1 f
    [ -d "$work" ] || die "no work folder $work"
    for f in "$work"/prometheus.pid "$work"/haproxy.pid "$work"/replica*.pid; do
        [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
    done
    if [ -d "$work/pg/data" ]; then
        as_pg "$(pg_bin)/pg_ctl" -D "$work/pg/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    sleep 0.5
    rm -rf "$work"
}

case "${1:-}" in
start) start "${2:-}" ;;
stop) stop "${2:?which work folder?}" ;;
run)
    work=$(start)
    trap 'stop "$work"' EXIT
    echo "cluster.sh: running; Ctrl-C stops it" >&2
    while sleep 3600; do :; done
    ;;
*) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
