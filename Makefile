# Front door. `make` builds build/nodegate; `make run` and `make check` first
# install whatever Debian packages are missing (as root), then run the main job
# or every test. CMake does the real work; this file only sequences it.

BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
CMAKE_ARGS ?=
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build deps test-deps run check bench bench-build bench-gate bench-cpu bench-hostmem bench-storage clean

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

deps:
	scripts/setup-deps

test-deps:
	scripts/setup-deps --test

# The main job: the fail-closed gate over the bundled example records.
# Exit status 1 from the gate means "some record is not admissible", which is
# what the examples are there to show; only 2 (an error) fails the target.
run: deps
	$(MAKE) build
	$(BUILD)/nodegate gate --baseline examples/baseline.json examples/records/*.json; test $$? -le 1
	$(BUILD)/nodegate gate --baseline examples/baseline.json --explain \
		--cohort-drops 0.12,0.115,0.125,0.118,0.122 examples/records/12pct-down.json; test $$? -le 1

check: test-deps
	$(MAKE) build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Benchmarks use their own optimised build, whatever build/ holds. Each prints
# its ratios against a reference measured in the same run (bench/README.md);
# `make -k bench` goes on past a missed target.
BENCH = build-bench
bench: bench-gate bench-cpu bench-hostmem bench-storage

bench-build:
	scripts/setup-deps --bench
	$(MAKE) build BUILD=$(BENCH) BUILD_TYPE=RelWithDebInfo

bench-gate: bench-build
	/usr/bin/python3 bench/gate_bench.py --nodegate $(BENCH)/nodegate --lib-bench $(BENCH)/bench/gate_bench

bench-cpu: bench-build
	$(BENCH)/bench/cpu_bench

bench-hostmem: bench-build
	$(BENCH)/bench/hostmem_bench

bench-storage: bench-build
	mkdir -p $(BENCH)/storage-bench
	/usr/bin/python3 bench/storage_bench.py --nodegate $(BENCH)/nodegate --dir $(BENCH)/storage-bench --rounds 3

clean:
	rm -rf $(BUILD) build-asan build-bench build-fuzz
