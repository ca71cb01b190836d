#!/usr/bin/env bash
# run.sh — set up a Debian 12 machine for parley, build it, and run the demo or the tests.
#
#   bash run.sh demo   install what is missing of what the build needs, build, install
#                      parley (tools/install.sh: the tool, libparley, its headers and
#                      parley.pc into /usr/local), run the main job (see README), then say
#                      what to try next
#   bash run.sh test   install what is missing, the tests' tools too (puppeteer-core as well:
#                      npm ci into tests/web), build, run every test twice: a release build
#                      and an AddressSanitizer + UndefinedBehaviorSanitizer build (the fault
#                      suite included: kill -9, full disk, locked store); then build the
#                      libFuzzer targets with clang (build-fuzz/) and run each for
#                      $PARLEY_FUZZ_SECONDS (60) after replaying its committed inputs; the
#                      last line is "N passed, N failed"
#   bash run.sh build  install what is missing of what the build needs, build only (into build/)
# Each also builds the default encoder once (tools/encoder.sh, into ~/.cache/parley/encoder),
# which `parley train` starts new models of few examples from, and the background sentences
# beside it, which it adds to them as their out-of-scope intent.
set -euo pipefail
cd "$(dirname "$0")"

# What `run.sh demo` and `run.sh build` install: what the build needs, every library of the
# optional parts the README's path uses (so build/ is configured the same whichever command
# comes first), and the default encoder's text.
packages=(gcc pkg-config meson ninja-build libcjson-dev libutf8proc-dev libopenblas-dev
          libyaml-dev libsqlite3-dev libpcre2-dev libedit-dev
          python3                      # the build's embed_files.py, tools/ (encoder, install)
          libwebsockets-dev libcap-dev # the ws.server node (its .pc requires libcap)
          libpq-dev                    # the PostgreSQL store
          libcurl4-openssl-dev         # actions answered by an action server (HTTP)
          # voice: GStreamer audio, pocketsphinx and its en-us model (speexdsp: its noise
          # suppressor), espeak-ng and flite
          libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-plugins-base
          gstreamer1.0-plugins-good libpocketsphinx-dev libsphinxbase-dev pocketsphinx-en-us
          libspeexdsp-dev
          libespeak-ng-dev espeak-ng flite1-dev
          flite                        # the flite tool: the README's spoken order (a WAV)
          wordnet-base)                # the default encoder's text (tools/encoder.sh)

# What `run.sh test` adds: the tools the tests run.
test_packages=(python3-numpy python3-torch # tests/reference and the Python tests
          clang libclang-rt-14-dev   # the fuzz build: clang and its libFuzzer runtime
          clang-format               # the layout/format test
          prometheus                 # promtool, for e2e/metrics
          python3-websockets openssl   # ws.server's protocol tests: a client, a test certificate
          python3-pytest python3-setuptools # the Python package's tests; pip install ./python
          nodejs chromium              # the browser tests (puppeteer-core from npm; npm below)
          postgresql haproxy curl      # samples/cluster and the PostgreSQL store's tests
                                       # (a throwaway server per test run, as `nobody`);
                                       # curl also for ws.server's REST API (test_ws_rest)
          pocketsphinx-testdata sox    # the voice tests' real speech; sox makes test audio
          python3-yaml                 # test_asr.py reads a bot's examples
          festival festvox-us-slt-hts) # a third test voice: festival's HTS (statistical) one

# Debian's nodejs has npm apart; NodeSource's nodejs carries its own and conflicts with it.
command -v npm >/dev/null 2>&1 || test_packages+=(npm)

install_missing() { # install_missing PACKAGE... — apt-get installs those not installed yet
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if ((${#missing[@]})); then
        echo "run.sh: installing ${missing[*]}"
        local sudo=""
        [ "$(id -u)" = 0 ] || sudo=sudo
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
        # A build folder configured before they came (run.sh demo, then run.sh test): meson
        # looks for them again (node, a C++ compiler: tests it defines only when found).
        local dir
        for dir in build build-asan build-fuzz; do
            [ ! -f "$dir/build.ninja" ] || meson setup --reconfigure "$dir" >/dev/null
        done
    fi
}

build() { # build DIR [meson options...]
    local dir=$1; shift
    [ -f "$dir/build.ninja" ] || meson setup "$dir" "$@" >/dev/null
    ninja -C "$dir"
}

# The default encoder new models of few examples start from (tools/encoder.sh): built once,
# minutes, with the tool alone, before the rest of the build trains the tests' models.
encoder() {
    [ -f build/build.ninja ] || meson setup build >/dev/null
    ninja -C build sdk/cli/parley
    bash tools/encoder.sh build/sdk/cli/parley
}

run_tests() { # run_tests DIR [MESON TEST ARGS...] — prints meson's summary, leaves "ok fail" in $counts
    local dir=$1 log rc=0
    shift
    meson test -C "$dir" --print-errorlogs --num-processes 2 --timeout-multiplier 3 "$@" || rc=$?
    log="$dir/meson-logs/testlog.json"
    counts=$(/usr/bin/python3 - "$log" <<'PY'
import json, sys
ok = fail = 0
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    if r in ("OK", "EXPECTEDFAIL"): ok += 1
    elif r not in ("SKIP",): fail += 1
print(ok, fail)
PY
)
    return 0
}

# The fuzz build: the whole library instrumented for libFuzzer, ASan and UBSan (a UBSan
# report aborts), so the harnesses see its coverage; only the fuzz targets are built.
fuzz() {
    local dir=build-fuzz
    [ -f "$dir/build.ninja" ] || CC=clang meson setup "$dir" -Dcuda=disabled \
        -Dbuildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args='-fsanitize=fuzzer-no-link -fno-sanitize-recover=all' >/dev/null
    ninja -C "$dir" $(ninja -C "$dir" -t targets all | sed -n 's|^\(tests/fuzz/fuzz_[a-z_]*\): .*|\1|p')
    PARLEY_FUZZ_SECONDS=${PARLEY_FUZZ_SECONDS:-60} run_tests "$dir" --suite fuzz --no-rebuild
}

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

cmd=${1:-}
case "$cmd" in
    build)
        install_missing "${packages[@]}"
        encoder
        build build
        ;;
    demo)
        install_missing "${packages[@]}"
        encoder
        build build
        bash tools/install.sh build
        bash samples/demo.sh build/sdk/cli/parley
        cat <<'TXT'
== parley is installed (/usr/local). In a new shell, your own bot (README.md, "A newcomer's path"):
   parley init mybot                     # a starter bot, its model trained at once
   parley chat mybot/pipeline.yaml       # talk to it
   cd mybot && parley run voice.yaml     # by voice in a browser: http://localhost:8765/
   pkg-config --cflags --libs parley     # to build your program against the library
TXT
        ;;
    test)
        install_missing "${packages[@]}" "${test_packages[@]}"
        npm ci --prefix tests/web --no-audit --no-fund --loglevel=error # puppeteer-core
        encoder
        build build
        build build-asan -Db_sanitize=address,undefined -Dbuildtype=debugoptimized -Db_lundef=false
        passed=0 failed=0
        for dir in build build-asan; do
            echo "== tests: $dir"
            run_tests "$dir"
            read -r ok fail <<<"$counts"
            passed=$((passed + ok)) failed=$((failed + fail))
        done
        echo "== fuzz: build-fuzz"
        fuzz
        read -r ok fail <<<"$counts"
        passed=$((passed + ok)) failed=$((failed + fail))
        echo "$passed passed, $failed failed"
        [ "$failed" = 0 ]
        ;;
    *)
        echo "usage: bash run.sh demo|test|build" >&2
        exit 2
        ;;
esac
