# crew -- the two commands that do everything:
#   make bench   build (release) and run the benchmark report
#   make test    build and run the test suite: normal build, ThreadSanitizer,
#                AddressSanitizer + UBSan, and valgrind memcheck
# Smaller steps: make build, make test-release, make test-tsan, make test-asan, make test-valgrind.

JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
GENERATOR = $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
CTEST     = ctest --output-on-failure -j $(JOBS)

.PHONY: all build test test-release test-tsan test-asan test-valgrind bench bench-quick clean models fuzz soak reliability-ci

all: build

build/release/build.ninja build/release/Makefile:
	cmake -S . -B build/release $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo
build/tsan/build.ninja build/tsan/Makefile:
	cmake -S . -B build/tsan $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCREW_SANITIZE=thread -DCREW_DEBUG_YIELD=ON -DCREW_BUILD_BENCH=OFF
build/asan/build.ninja build/asan/Makefile:
	cmake -S . -B build/asan $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCREW_SANITIZE=address -DCREW_BUILD_BENCH=OFF

build: | build/release/$(if $(GENERATOR),build.ninja,Makefile)
	cmake --build build/release -j $(JOBS)

# Release last, so the run closes on ctest's own summary line.
test: test-valgrind test-asan test-tsan test-release

test-release: build
	cd build/release && $(CTEST)

test-tsan: | build/tsan/$(if $(GENERATOR),build.ninja,Makefile)
	cmake --build build/tsan -j $(JOBS)
	cd build/tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" $(CTEST)

test-asan: | build/asan/$(if $(GENERATOR),build.ninja,Makefile)
	cmake --build build/asan -j $(JOBS)
	cd build/asan && ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" $(CTEST)

# Every test binary under memcheck, with stress sizes scaled down (CREW_TEST_SCALE).
test-valgrind: build
	tools/valgrind-tests.sh build/release

bench: build
	bench/run.sh

bench-quick: build
	bench/run.sh --quick

clean:
	rm -rf build

# Reliability (docs/reliability.md): Spin models of the sleep/wake protocol and the group slot
# map, the libFuzzer API fuzzer (60 s), and the soak run (SOAK_SECONDS, default 300).
# reliability-ci: all three with a 60-second soak. models and fuzz skip without spin / clang.
SOAK_SECONDS ?= 300

models:
	models/check.sh build/models

fuzz:
	fuzz/run.sh 60

build/soak/build.ninja build/soak/Makefile:
	cmake -S . -B build/soak $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCREW_BUILD_BENCH=OFF -DCREW_BUILD_SIM=OFF

soak: | build/soak/$(if $(GENERATOR),build.ninja,Makefile)
	cmake --build build/soak -j $(JOBS) --target soak
	build/soak/tests/soak -s $(SOAK_SECONDS)

reliability-ci: models fuzz
	$(MAKE) soak SOAK_SECONDS=60
