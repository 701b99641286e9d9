# Front door. `make` builds build/nodegate; `make run` and `make check` first
# install whatever Debian packages are missing (as root), then run the main job
# or every test. CMake does the real work; this file only sequences it.

BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
CMAKE_ARGS ?=
CTEST_ARGS ?=
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: install deb all build deps test-deps run check stress bench bench-build bench-gate bench-cpu bench-hostmem bench-storage bench-store bench-epilog fleet-sim clean

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# make install [PREFIX=/usr/local] [DESTDIR=]: bin/nodegate, lib/nodegate/,
# share/nodegate/ (scenarios, example configuration), share/doc/nodegate/.
# The tree works wherever it is copied (nodegate finds the rest from itself).
PREFIX ?= /usr/local
install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

# make deb: a Debian package of the release build, in $(BUILD)/deb/.
deb:
	$(MAKE) build BUILD_TYPE=RelWithDebInfo
	scripts/make-deb $(BUILD)

deps:
	scripts/setup-deps

test-deps:
	scripts/setup-deps --test

# The main job: admission of this node against the embedded SQLite store
# (build/state/nodegate.db), with the short profile on build/state. A new
# store has no class baselines yet, so the first runs say the class is
# establishing one. Exit status 1 (held, suspect, quarantined) is an answer;
# only 2 and 3 (input or store errors) fail the target.
STATE = $(BUILD)/state
run: deps
	$(MAKE) build
	mkdir -p $(STATE)
	$(BUILD)/nodegate --store $(STATE)/nodegate.db admit --quick --storage-path $(STATE); test $$? -le 1
	$(BUILD)/nodegate --store $(STATE)/nodegate.db baseline show
	$(BUILD)/nodegate --store $(STATE)/nodegate.db audit verify

check: test-deps
	$(MAKE) build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# The store under load, at a scale `make check` does not run (minutes on a
# small machine): writer processes SIGKILLed mid-transaction STRESS_KILLS
# times, then STRESS_WRITERS writers at once through the library, then
# STRESS_WRITERS `nodegate ingest` commands at once. Prints kills,
# acknowledged writes, lost (must be 0) and the slowest command; fails on
# any loss, any failed write, or a slowest command past half the busy timeout.
STRESS_KILLS   ?= 400
STRESS_WRITERS ?= 64
stress: build
	cd $(BUILD) && NODEGATE_TEST_BACKEND=sqlite NODEGATE_TEST_NAME=stress \
	  NODEGATE_CRASH_ROUNDS=$(STRESS_KILLS) NODEGATE_CRASH_WRITERS=$(STRESS_WRITERS) \
	  tests/store/test_store_crash
	/usr/bin/python3 tests/store/stress_writers.py --nodegate $(BUILD)/nodegate \
	  --writers $(STRESS_WRITERS) --commands 8 --records 20

# Benchmarks use their own optimised build, whatever build/ holds. Each prints
# its ratios against a reference measured in the same run (bench/README.md);
# `make -k bench` goes on past a missed target.
BENCH = build-bench
bench: bench-gate bench-cpu bench-hostmem bench-storage bench-store bench-epilog bench-report

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

# nodegate epilog on eight synthetic GPUs, against process start-up.
bench-epilog: bench-build
	$(BENCH)/bench/epilog_bench --nodegate $(BENCH)/nodegate --runs 200

# The store against plain SQL: SQLite in $(BENCH)/store-bench, and PostgreSQL
# on a throwaway server when one can be started (else SQLite alone).
bench-store: bench-build
	mkdir -p $(BENCH)/store-bench
	@uri=""; \
	if scripts/pg-test-server start $(BENCH)/pg-bench; then uri=$$(cat $(BENCH)/pg-bench/uri); \
	else echo "bench-store: no PostgreSQL server here: SQLite only" >&2; fi; \
	rc=0; $(BENCH)/bench/store_bench --dir $(BENCH)/store-bench $${uri:+--pg "$$uri"} || rc=$$?; \
	if [ -n "$$uri" ]; then scripts/pg-test-server stop $(BENCH)/pg-bench; fi; \
	exit $$rc

# Decision quality (docs/fleet-simulator.md): nodegate's admission policy
# against the rules other tools use, every contestant on the same seeded
# synthetic fleet and the same draws. Prints the default fleet's table (one
# fixed seed, to reproduce), then the scenario set over five seeds drawn fresh
# (printed) with means and ranges and the sensitivity of healthy drains to
# each policy value, writes both as JSON, and fails when nodegate misses a
# target that bench/known-losses.json does not list.
FLEET_SIM_ARGS ?= --nodes 2000 --runs 30 --seed 20261130
# The scenario set runs at 500 nodes (README, docs/fleet-simulator.md): 50
# runs and the sensitivity table in about 26 minutes on two shared cores.
FLEET_SCENARIO_ARGS ?= --nodes 500 --runs 30 --seeds 5
fleet-sim:
	$(MAKE) $(BENCH)/CMakeCache.txt BUILD=$(BENCH) BUILD_TYPE=RelWithDebInfo
	cmake --build $(BENCH) -j $(JOBS) --target nodegate-fleetsim nodegate
	$(BENCH)/nodegate-fleetsim $(FLEET_SIM_ARGS) --json $(BENCH)/fleet-sim.json
	/usr/bin/python3 bench/fleet_scenarios.py --fleetsim $(BENCH)/nodegate-fleetsim \
	  --nodegate $(BENCH)/nodegate --jobs $(JOBS) $(FLEET_SCENARIO_ARGS) --sensitivity \
	  --json $(BENCH)/fleet-scenarios.json --check

# nodegate report on a generated month of a 10,000-node fleet, against the
# same rows read by plain SQL: SQLite, and PostgreSQL on a throwaway server
# when one can be started (else SQLite alone).
bench-report: bench-build
	mkdir -p $(BENCH)/report-bench
	@uri=""; \
	if scripts/pg-test-server start $(BENCH)/pg-report-bench; then uri=$$(cat $(BENCH)/pg-report-bench/uri); \
	else echo "bench-report: no PostgreSQL server here: SQLite only" >&2; fi; \
	rc=0; /usr/bin/python3 bench/report_bench.py --nodegate $(BENCH)/nodegate \
	  --fleetgen $(BENCH)/bench/fleetgen --dir $(BENCH)/report-bench $${uri:+--pg "$$uri"} || rc=$$?; \
	if [ -n "$$uri" ]; then scripts/pg-test-server stop $(BENCH)/pg-report-bench; fi; \
	exit $$rc

clean:
	rm -rf $(BUILD) build-asan build-bench build-fuzz
