#!/bin/sh
# Builds samples/kiosk/kiosk.c the way an outside user would: against the library as
# `bash run.sh demo` installs it (tools/install.sh, staged here under a temporary DESTDIR, which
# checks that a new shell finds the tool and parley.pc), found through pkg-config, then runs
# it on two lines.
# usage: build_installed.sh BUILD_DIR SOURCE_DIR MODEL_DIR [SANITIZE]   (run by `meson test`)
# SANITIZE is the build's b_sanitize: a sanitized library needs a sanitized program.
set -eu
build=$1 src=$2 model=$3 san=${4:-none}
extra=""
[ "$san" = none ] || extra="-fsanitize=$san"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash "$src/tools/install.sh" "$build" "$tmp/root"
pc=$(dirname "$(find "$tmp/root" -name parley.pc | head -n 1)")
[ -d "$pc" ] || { echo "no parley.pc installed"; exit 1; }
export PKG_CONFIG_PATH="$pc"
# The .pc file says prefix=/usr/local (or the configured prefix); the files are staged
# under $tmp/root, so the prefix is moved there.
prefix=$(pkg-config --variable=prefix parley)
pcf="pkg-config --define-variable=prefix=$tmp/root$prefix"
cc -std=c11 -Wall -Werror $extra "$src/samples/kiosk/kiosk.c" -o "$tmp/kiosk" \
    $($pcf --cflags --libs parley)
libdir=$($pcf --variable=libdir parley)
printf 'i want a large pizza with mushrooms\n2 pizzas\ndeliver to 5 main street\nyes\n/next\nhello\n' |
    LD_LIBRARY_PATH="$libdir" "$tmp/kiosk" "$src/samples/kiosk/pipeline.yaml" \
        "nlu.model=$model" "dialog.store=$tmp/kiosk.db" >"$tmp/out.txt"
cat "$tmp/out.txt"
grep -q "size = large" "$tmp/out.txt" || { echo "kiosk: no reply with size = large"; exit 1; }
# The order completes through the kiosk's own place_order action.
grep -q "Order 1 is on its way" "$tmp/out.txt" || { echo "kiosk: the action did not run"; exit 1; }
grep -q "Next customer" "$tmp/out.txt"
