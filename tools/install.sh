#!/usr/bin/env bash
# install.sh — installs parley from a build directory with `meson install`: the parley tool,
# libparley (.so and .a), its headers and parley.pc. Then it checks, in a new login shell with
# nothing of this one's environment, that they are found where they are: `parley` on the
# PATH, parley.pc by pkg-config, libparley by the loader. `bash run.sh demo` installs with it;
# tests/e2e's kiosk_installed runs it staged under a temporary DESTDIR.
#
#   bash tools/install.sh BUILD_DIR           into the build's prefix (/usr/local unless set
#                                             otherwise), with sudo when not root, then ldconfig
#   bash tools/install.sh BUILD_DIR DESTDIR   staged under DESTDIR: the checks run the staged
#                                             files and check that the prefix's folders are
#                                             on the new shell's default paths
# The build must be up to date: it is not rebuilt, so that sudo compiles nothing in it.
set -euo pipefail
build=${1:?usage: install.sh BUILD_DIR [DESTDIR]}
destdir=${2:-}
fail() { echo "install.sh: $*" >&2; exit 1; }
# holds GREP-ARGS...: whether standard input has a line grep matches. It reads all of its
# input: `grep -q` stops at the first match, and the writer it leaves then dies of SIGPIPE,
# which pipefail counts as the pipeline failing.
holds() { local n; n=$(grep -c "$@"); [ "$n" -gt 0 ]; }

if [ -n "$destdir" ]; then
    meson install -C "$build" --no-rebuild --quiet --destdir "$destdir"
else
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo meson install -C "$build" --no-rebuild --quiet
    # its log is the one file it writes in the build folder, which stays its owner's
    [ -z "$sudo" ] || $sudo chown "$(id -u):$(id -g)" "$build/meson-logs/install-log.txt"
    $sudo /sbin/ldconfig
fi

read -r prefix bindir libdir < <(meson introspect "$build" --buildoptions | python3 -c '
import json, os, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(o["prefix"], *(os.path.join(o["prefix"], o[k]) for k in ("bindir", "libdir")))')

# A new login shell of a user with no dotfiles: /etc/profile's PATH and the tools' built-in
# search paths, which are what a newcomer's next shell has.
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
newshell() { env -i HOME="$home" bash -lc "$1"; }
newshell 'echo "$PATH"' | tr : '\n' | holds -xF "$bindir" ||
    fail "$bindir is not on a new shell's PATH"
newshell 'pkg-config --variable pc_path pkg-config' | tr : '\n' | holds -xF "$libdir/pkgconfig" ||
    fail "$libdir/pkgconfig is not on pkg-config's default path"
cat /etc/ld.so.conf /etc/ld.so.conf.d/*.conf 2>/dev/null | holds -xF "$libdir" ||
    fail "$libdir is not among the loader's folders (/etc/ld.so.conf.d)"

# Staged, the new shell is pointed at the staged folders; installed, it is left as it is.
stage="" define=""
if [ -n "$destdir" ]; then
    stage="export PATH='$destdir$bindir':\$PATH PKG_CONFIG_PATH='$destdir$libdir/pkgconfig';"
    define="--define-variable=prefix='$destdir$prefix'"
else
    /sbin/ldconfig -p | holds "libparley\.so\.0 .*=> $libdir/" ||
        fail "libparley.so.0 is not in the loader's cache"
fi
tool=$(newshell "$stage command -v parley") || fail "a new shell finds no parley"
[ "$tool" = "$destdir$bindir/parley" ] || fail "a new shell runs $tool, not $destdir$bindir/parley"
version=$(newshell "$stage parley --version") || fail "$tool --version failed"
case "$version" in "parley "[0-9]*) ;; *) fail "$tool --version: '$version'" ;; esac
flags=$(newshell "$stage pkg-config $define --cflags --libs parley") ||
    fail "pkg-config finds no parley in a new shell"
case " $flags " in
    *" -I$destdir$prefix/include "*" -lparley "*) ;;
    *) fail "pkg-config --cflags --libs parley: '$flags'" ;;
esac
echo "install.sh: $version in $destdir$prefix; a new shell runs $tool, pkg-config --cflags --libs parley: $flags"
