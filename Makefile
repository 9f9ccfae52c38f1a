# crew -- the two commands that do everything:
#   make bench   build (release) and run the benchmark report
#   make test    build and run the test suite: normal build, ThreadSanitizer,
#                AddressSanitizer + UBSan, and valgrind memcheck
# Both first check for the Debian packages they need (tools/deps.sh, the one list, which .ci/run
# uses too): run as root they install what is missing, otherwise they print the apt-get command
# and stop. CREW_DEPS=skip skips the check.
# Smaller steps (no package check): make build, make test-release, make test-tsan, make test-asan,
# make test-valgrind.

JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
GENERATOR = $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
# --timeout: for a test without a TIMEOUT of its own (tests/CMakeLists.txt gives each kind one),
# so that a hang never costs CTest's default ten minutes.
CTEST     = ctest --output-on-failure --no-tests=error --timeout 300 -j $(JOBS)
# Configure build/$(1) with options $(2) unless it is configured already (with whichever generator).
configure = test -f build/$(1)/CMakeCache.txt || \
	cmake -S . -B build/$(1) $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(2)
TSAN_FLAGS = -DCREW_SANITIZE=thread -DCREW_DEBUG_YIELD=ON -DCREW_BUILD_BENCH=OFF
ASAN_FLAGS = -DCREW_SANITIZE=address -DCREW_BUILD_BENCH=OFF

.PHONY: all build test test-release test-tsan test-asan test-valgrind bench bench-quick clean models fuzz soak reliability-ci

all: build

build:
	@$(call configure,release,)
	cmake --build build/release -j $(JOBS)

# The packages first; then the four configurations, each run even if one before it failed (-k),
# release last, so the run closes on ctest's own summary line (and make's list of failed ones).
test:
	@tools/deps.sh test
	@$(MAKE) --no-print-directory -k test-valgrind test-asan test-tsan test-release; rc=$$?; \
	command -v valgrind >/dev/null || echo "make test: valgrind memcheck was SKIPPED (not installed)"; \
	exit $$rc

test-release: build
	cd build/release && $(CTEST)

test-tsan:
	@$(call configure,tsan,$(TSAN_FLAGS))
	cmake --build build/tsan -j $(JOBS)
	cd build/tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" $(CTEST)

test-asan:
	@$(call configure,asan,$(ASAN_FLAGS))
	cmake --build build/asan -j $(JOBS)
	cd build/asan && ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" $(CTEST)

# Every test binary under memcheck, with stress sizes scaled down (CREW_TEST_SCALE); skipped with
# a message when valgrind is not installed.
test-valgrind: build
	tools/valgrind-tests.sh build/release

# The benchmark report needs no test framework: GoogleTest is not among its packages.
bench:
	@tools/deps.sh bench
	@$(MAKE) --no-print-directory build
	bench/run.sh

bench-quick:
	@tools/deps.sh bench
	@$(MAKE) --no-print-directory build
	bench/run.sh --quick

clean:
	rm -rf build

# Reliability (docs/reliability.md): Spin models of the sleep/wake protocol and the group slot
# map, the two libFuzzer targets (60 s each, side by side), and the soak run (SOAK_SECONDS,
# default 300, for runs by hand). reliability-ci: all three with a 30-second soak (CI's: its
# cycles of 1 s rotate through the four strategies and both locks, so 30 s still runs each of the
# eight pairings at least three times). models and fuzz skip without spin / clang.
SOAK_SECONDS ?= 300

models:
	models/check.sh build/models

fuzz:
	fuzz/run.sh 60

# The soak program is the normal build's (build/release, the one make build and make test use):
# only it and the library it links are built here.
soak:
	@$(call configure,release,)
	cmake --build build/release -j $(JOBS) --target soak
	build/release/tests/soak -s $(SOAK_SECONDS)

reliability-ci: models fuzz
	$(MAKE) soak SOAK_SECONDS=30
