#!/bin/sh
# format.sh — fails when a C or CUDA source under the repository root ($1) is not formatted
# as .clang-format says (clang-format 14, Debian 12's; another version may format otherwise,
# so it skips with 77). Lists each file that would change; `clang-format -i FILE` fixes it.
root=$1
command -v clang-format >/dev/null || exit 77
clang-format --version | grep -q 'version 14\.' || exit 77
cd "$root" || exit 1
bad=0
# (npm's packages under node_modules/ are not ours)
for f in $(find sdk pipeline services nlu dialog tests bench samples -name node_modules -prune -o \
               \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.cc' \) -print); do
    if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "not formatted: $f"
        bad=1
    fi
done
exit $bad
