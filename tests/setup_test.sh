#!/usr/bin/env bash
# Setting up on a fresh machine (README's two commands), without touching this machine's packages:
# - tools/deps.sh, against stand-ins for dpkg-query, id and apt-get: as root it runs apt-get update
#   then installs exactly the missing packages; otherwise it prints the apt-get command and exits 1;
#   `bench` never asks for GoogleTest; CREW_DEPS=skip checks nothing;
# - tools/valgrind-tests.sh without valgrind on PATH skips the configuration with a message
#   (exit 0) instead of failing every run with status 127;
# - CMake without GoogleTest: configuring succeeds with a message and no test targets (make build
#   and make bench need no GoogleTest), and CREW_BUILD_TESTS=ON stops with a clear error;
# - .ci/run still installs through tools/deps.sh and ends with README's test command.
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "setup_test: FAILED: $*" >&2; exit 1; }

stubs=$work/stubs
mkdir -p "$stubs"
cat >"$stubs/dpkg-query" <<'EOF'
#!/bin/sh
# dpkg-query -W -f=... PKG: "installed" unless PKG is in $FAKE_MISSING.
for pkg; do :; done
case " $FAKE_MISSING " in *" $pkg "*) exit 1 ;; esac
printf installed
EOF
cat >"$stubs/id" <<'EOF'
#!/bin/sh
echo "$FAKE_UID"
EOF
cat >"$stubs/apt-get" <<'EOF'
#!/bin/sh
echo "apt-get $*" >>"$FAKE_LOG"
EOF
chmod +x "$stubs"/*
deps() { PATH="$stubs:$PATH" FAKE_LOG=$work/apt.log "$src/tools/deps.sh" "$@"; }

# Not root, two packages missing: the exact command, status 1, nothing installed.
rm -f "$work/apt.log"
rc=0
out=$(FAKE_UID=1000 FAKE_MISSING="valgrind libgtest-dev" deps test 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "deps.sh test as a user with packages missing: status $rc, not 1"
grep -q 'sudo apt-get install -y --no-install-recommends libgtest-dev valgrind$' <<<"$out" ||
    fail "deps.sh did not print the apt-get command: $out"
[ ! -e "$work/apt.log" ] || fail "deps.sh ran apt-get as a user"

# Root: update, then install exactly what is missing.
rc=0
FAKE_UID=0 FAKE_MISSING="valgrind clang" deps test >/dev/null 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "deps.sh test as root: status $rc"
[ "$(cat "$work/apt.log")" = "apt-get update
apt-get install -y --no-install-recommends valgrind clang" ] ||
    fail "deps.sh as root ran: $(cat "$work/apt.log")"

# Nothing missing: no apt-get at all. make bench never needs GoogleTest.
rm -f "$work/apt.log"
FAKE_UID=0 FAKE_MISSING="" deps test ci >/dev/null || fail "deps.sh with nothing missing failed"
[ ! -e "$work/apt.log" ] || fail "deps.sh ran apt-get with nothing missing"
FAKE_UID=1000 FAKE_MISSING="libgtest-dev" deps bench >/dev/null 2>&1 ||
    fail "deps.sh bench asked for GoogleTest"
FAKE_UID=1000 FAKE_MISSING="valgrind" CREW_DEPS=skip deps test >/dev/null ||
    fail "CREW_DEPS=skip still checked"
rc=0
deps nonsense >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "deps.sh accepted an unknown set"
grep -q '^tools/deps.sh ci$' "$src/.ci/run" || fail ".ci/run does not install through tools/deps.sh"
[ "$(grep -v '^\s*$' "$src/.ci/run" | tail -1)" = "make test" ] ||
    fail ".ci/run does not end with README's test command"
echo "setup_test: tools/deps.sh ok"

# valgrind missing: one clear line, status 0, no run attempted.
nov=$work/novalgrind
mkdir -p "$nov"
for tool in bash env nproc mktemp; do ln -s "$(command -v "$tool")" "$nov/$tool"; done
out=$(PATH=$nov "$src/tools/valgrind-tests.sh" "$work/nobuild" 2>&1) ||
    fail "valgrind-tests.sh without valgrind failed: $out"
grep -q 'SKIPPED: valgrind is not installed' <<<"$out" || fail "no skip message: $out"
echo "setup_test: memcheck without valgrind is skipped"

# CMake without GoogleTest (as if libgtest-dev were absent).
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
out=$(cmake -S "$src" -B "$work/nogtest" "${gen[@]}" -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON \
    -DCREW_BUILD_BENCH=OFF 2>&1) || fail "configuring without GoogleTest failed: $out"
grep -q 'GoogleTest not found (Debian: libgtest-dev)' <<<"$out" || fail "no message: $out"
(cd "$work/nogtest" && ctest -N) | grep -q 'Total Tests: 0' || fail "tests registered without GoogleTest"
if cmake -S "$src" -B "$work/required" "${gen[@]}" -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON \
    -DCREW_BUILD_TESTS=ON >"$work/required.log" 2>&1; then
    fail "CREW_BUILD_TESTS=ON configured without GoogleTest"
fi
grep -q 'CREW_BUILD_TESTS=ON needs GoogleTest' "$work/required.log" ||
    fail "no clear error for CREW_BUILD_TESTS=ON: $(cat "$work/required.log")"
echo "setup_test: CMake without GoogleTest configures (no tests), and ON requires it"
echo "setup_test: ok"
