# The commands people type. Everything installs what it needs itself, into one cache outside the
# clone (SQS_BACKPRESSURE_CACHE, scripts/cache.sh): the emulators' environments, linked from
# .venv*/, and the pinned cargo tools. `make help` lists the targets.

CARGO ?= cargo
EMULATORS := scripts/emulators.sh
# Wherever CARGO_TARGET_DIR or a cargo config puts the build (.ci/run puts it in the cache).
TARGET_DIR = $(shell $(CARGO) metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
# The pinned cargo-nextest (the machine's when it is that version): its closing summaries are what CI counts.
NEXTEST := scripts/tool.sh nextest
# The tests make test leaves to the gate, as one nextest filterset: make test runs every other test,
# the gate these, so that together they run each test once. Each end-to-end scenario runs in make
# test on moto; the gate runs it again on LocalStack's SQS and on fauxqs, and runs what takes
# minutes to say more than "it works": every AWS call under deny, throttle, 5xx and hang (the
# *_faults files, the fault matrix, the operator CLI's every failing call, its boundaries and a
# full disk), hostile input, the template deployed on CloudFormation emulators, the planner's
# whole-search comparisons and its model against real workers (which runs alone).
GATE_TESTS := binary(recommend_agrees) | test(/_on_localstack$$|_on_fauxqs$$/) \
  | test(/^(deployed|planner_vs_worker|fault_matrix|reliability|hostile_input)::/) \
  | test(/^(worker_hostile_input|operator_cli_hostile|operator_cli_errors)::/) \
  | test(/^(operator_cli_boundaries|operator_cli_disk|emulators_copy)::/) | test(/^[a-z_]+_faults::/)
CACHE_ROOT = $(shell . scripts/cache.sh && echo "$$cache_root")


.PHONY: help test test-build test-installs ci gate gate-cargo gate-beside check pre-push e2e template-doctor demo simulate simulate-full simulate-compare simulate-existing lint template-lint supply-chain builds-alone doc cli-docs worker-image unit invoke rehearse build deploy emulators emulators-stop bench soak fuzz release clean

## make help: the targets, and the loop for a change
help:
	@echo "First:"
	@echo "  make demo         the emulators, both functions on the sample events, what they did"
	@echo "  make test         unit, end-to-end and doctests: does it work here?"
	@echo "The loop for a change (docs/testing.md has each one's time):"
	@echo "  make check        fmt and clippy                                     (under 2 min warm)"
	@echo "  make unit         the tests that need no emulator                    (under 2 min warm)"
	@echo "  make e2e TEST=x   the end-to-end tests whose name holds x, on emulators left"
	@echo "                    running between runs (make emulators-stop ends them) (under 3 min warm)"
	@echo "  make pre-push     what a change most often breaks: run it before you push (under 6 min warm)"
	@echo "The gate (CI's .ci/run): make ci = make test, then make gate (every other check)"
	@echo "Others: simulate, simulate-full, invoke, build, deploy, worker-image, release, bench, soak,"
	@echo "        fuzz, lint, doc, builds-alone, supply-chain, template-lint, cli-docs,"
	@echo "        clean (stops the emulators; a cold run: docs/testing.md#the-cache)"

## make test: what a newcomer runs to know the project works: unit and adapter tests, each
## end-to-end scenario on the emulators (the functions and the library's examples as binaries),
## doctests; the gate runs the other tests (GATE_TESTS). The build and the installs (emulators,
## nextest) run side by side; the test runner's summary comes last, for CI to count.
test:
	@echo "== make test 1/3: building every package, its tests and examples; beside it, installing the emulators and nextest into $(CACHE_ROOT), nextest only when the machine has no copy of the pinned version (the first time about 7 minutes on 2 cores)"
	$(MAKE) --no-print-directory -j2 --output-sync=line test-build test-installs
	@echo "== make test 2/3: the doctests"
	$(CARGO) test --quiet --doc --workspace
	@echo "== make test 3/3: the unit tests and each end-to-end scenario on the emulators, four at a time (about 3 minutes; the gate runs the rest)"
	# CI shows a failed run's last lines: a backtrace would push the failing test's message out.
	RUST_BACKTRACE=0 $(EMULATORS) run -- $(NEXTEST) run --workspace -E 'not ($(GATE_TESTS))'
	@echo "== make test passed: the unit tests and each end-to-end scenario (the tests it skips, GATE_TESTS in the Makefile, run in make gate: CI's .ci/run)"

test-build:
	$(CARGO) build --workspace --bins --examples --tests

test-installs:
	$(EMULATORS) install
	$(NEXTEST) --version >/dev/null

## make ci: the full gate, what .ci/run runs: make test, then make gate.
ci:
	$(MAKE) --no-print-directory test
	$(MAKE) --no-print-directory gate

## make gate: every check make test does not run: fmt, clippy, cargo-machete, the docs, the supply
## chain, the template's lint and doctor --template on every parameter set, each shipped package
## built on its own and the Dockerfile's command, the public API, packaging, the planner against
## AWS's published figures, the CLI's manual pages; last, the tests make test leaves to it. Two
## lanes side by side: the dev-profile cargo steps, which share one target dir, and what needs none
## of it (the pinned tools' installs, SAM's lint, then rustdoc's JSON for the public API and the
## Dockerfile's build, each in a target dir of its own).
gate:
	$(MAKE) --no-print-directory -j2 --output-sync=line gate-cargo gate-beside
	scripts/public-api.sh
	$(TARGET_DIR)/debug/simulate fidelity >$(TARGET_DIR)/fidelity.md || { cat $(TARGET_DIR)/fidelity.md; exit 1; }
	@echo "simulate fidelity: $$(tail -1 $(TARGET_DIR)/fidelity.md) (table: $(TARGET_DIR)/fidelity.md)"
	$(MAKE) --no-print-directory cli-docs template-doctor
	scripts/package.sh
	@echo "== make gate: the tests make test leaves to it (each scenario on LocalStack and fauxqs, faults, deployed stacks, the planner's searches)"
	$(CARGO) build --workspace --bins --examples --tests
	RUST_BACKTRACE=0 $(EMULATORS) run -- $(NEXTEST) run --workspace -E '$(GATE_TESTS)'

gate-cargo:
	$(MAKE) --no-print-directory -j1 lint doc
	scripts/builds-alone.sh checks
	scripts/supply-chain.sh

gate-beside:
	for tool in hack deny machete; do scripts/tool.sh $$tool --version >/dev/null || exit 1; done
	$(MAKE) --no-print-directory -j1 template-lint
	scripts/public-api.sh json
	scripts/builds-alone.sh dockerfile

## make check: formatting and clippy, warnings as errors: the first step of the loop
check:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## make pre-push: what a change most often breaks, before you push: make check, every test that
## needs no emulator, the doctests, and the public API against its record; CI runs the whole gate
pre-push: check unit
	$(CARGO) test --quiet --doc --workspace
	scripts/public-api.sh

## make e2e TEST=name: the end-to-end tests whose name holds TEST, against emulators started once
## and left running for the next run (make emulators-stop ends them)
e2e:
	@test -n "$(TEST)" || { echo "make e2e: say which tests, as TEST=part_of_a_name"; exit 2; }
	$(CARGO) build --workspace --bins --examples
	$(EMULATORS) ensure
	. .emulators/env && RUST_BACKTRACE=0 $(NEXTEST) run -p e2e-tests -E 'test(/$(TEST)/)'
	@echo "== make e2e: the emulators are still running for the next run; make emulators-stop ends them"

## make cli-docs: sqs-backpressure's shell completions and manual page, in target/cli/
## (the gate runs it, so they cannot rot); bash checks its script parses
cli-docs: CLI = $(TARGET_DIR)/debug/sqs-backpressure
cli-docs: CLI_DOCS = $(TARGET_DIR)/cli
cli-docs:
	mkdir -p $(CLI_DOCS)
	$(CLI) man > $(CLI_DOCS)/sqs-backpressure.1
	for sub in stats list show export replay discard audit doctor completions man; do \
	  $(CLI) man $$sub > $(CLI_DOCS)/sqs-backpressure-$$sub.1 || exit 1; \
	done
	for shell in bash zsh fish; do \
	  $(CLI) completions $$shell > $(CLI_DOCS)/sqs-backpressure.$$shell || exit 1; \
	done
	bash -n $(CLI_DOCS)/sqs-backpressure.bash
	@echo "completions and manual page in $(CLI_DOCS)"

## make template-doctor: `doctor --template` on every parameter set in the repository (deploy/,
## tests/template-sets/): each must give no finding
template-doctor: CLI = $(TARGET_DIR)/debug/sqs-backpressure
template-doctor:
	for set in deploy/samconfig-*.toml tests/template-sets/*.json; do \
	  $(CLI) doctor --template template.yaml --parameters $$set >$(TARGET_DIR)/doctor-set.txt \
	    || { cat $(TARGET_DIR)/doctor-set.txt; exit 1; }; \
	done
	@echo "doctor --template: every parameter set in deploy/ and tests/template-sets/ gives no finding"

## make doc: the API reference (target/doc/backpressure_batch/index.html); warnings are errors
doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --workspace

## make lint: make check, then no unused dependency (cargo-machete, pinned, installed on first use)
lint: check
	scripts/unused-deps.sh

## make builds-alone: every package a user builds checked on its own, the libraries with each
## feature alone and their tests with none (cargo-hack, pinned, installed on first use; a warning
## fails it), then the Dockerfile's cargo command as the Dockerfile writes it (its release profile
## without LTO): no package leans on features another turns on
builds-alone:
	scripts/builds-alone.sh

## make supply-chain: cargo deny check licenses bans sources (deny.toml), offline; the pinned
## cargo-deny is installed into the cache on first use
supply-chain:
	scripts/supply-chain.sh

## cfn-lint and `sam validate --lint` (pinned, in .venv-sam/)
template-lint:
	scripts/sam.sh lint

## make unit: the tests that need no emulator: every package's but the end-to-end harness's, less
## the planner's two whole-search comparisons (two minutes alone; the gate runs them). Some run the
## workspace's binaries, so those are built first.
unit:
	$(CARGO) build --workspace --bins --examples
	$(NEXTEST) run --workspace --exclude e2e-tests -E 'not binary(recommend_agrees)'

## make simulate: the capacity planner's first look, 29 s on 2 cores once built, 8 s more for the CPU example (its release
## build: 37 s the first time on a fresh clone, 20 s after a change to the planner alone;
## measured with time, the machine otherwise idle). Every policy on the 15
## built-in traces (a table each; in target/simulate/, <trace>.{svg,png}, all policies at a
## glance, and <trace>-detail.{svg,png}, each in full), burst-from-idle with each policy at its
## own best setting (its overview is the README's picture, docs/img/burst-from-idle.{svg,png};
## its detail docs/img/burst-from-idle-detail.{svg,png}), then recommend's full search on the six
## SIMULATE_TRACES, one of each shape, for the ECS worker (TargetLoadPercent x MinTasks for the
## template's ScalingLoad, and its two other signals) and for the Lambda consumer
## (MaximumConcurrency x BatchSize): each trace's answer is the one simulate-full prints for it.
## make simulate-full: the same with recommend on all 15 traces, 5 min 18 s once built
## (weekly, office-hours and diurnal take 4.5 of them).
## make simulate-compare: the comparisons and the pictures alone, 5 s.
SIMULATE := $(CARGO) run --quiet --release -p capacity-planner --bin simulate --
SIMULATE_TRACES := steady burst-from-idle spike-on-warm-fleet sparse-trickle batch-every-4h random-bursts
simulate: simulate-compare simulate-existing
	$(SIMULATE) recommend $(SIMULATE_TRACES:%=--trace %)
	$(SIMULATE) recommend --consumer lambda $(SIMULATE_TRACES:%=--trace %)

## make simulate-existing: docs/capacity-planner.md's worked example of a service that scales on
## CPU, with the ScalingLoad policy recommended beside its CPU policy, and its picture
## (docs/img/diurnal-existing.{svg,png}), 8 s once built.
simulate-existing:
	$(SIMULATE) recommend --scaling-target existing --trace diurnal --min-tasks 1 --cpu-per-message 1 --out target/simulate
	mkdir -p docs/img
	cp target/simulate/diurnal-existing.svg docs/img/diurnal-existing.svg
	cp target/simulate/diurnal-existing.png docs/img/diurnal-existing.png

simulate-full: simulate-compare simulate-existing
	$(SIMULATE) recommend
	$(SIMULATE) recommend --consumer lambda

simulate-compare:
	$(SIMULATE) compare --out target/simulate
	$(SIMULATE) compare --best-settings --trace burst-from-idle --out target/simulate
	mkdir -p docs/img
	cp target/simulate/burst-from-idle-best-settings.svg docs/img/burst-from-idle.svg
	cp target/simulate/burst-from-idle-best-settings.png docs/img/burst-from-idle.png
	cp target/simulate/burst-from-idle-best-settings-detail.svg docs/img/burst-from-idle-detail.svg
	cp target/simulate/burst-from-idle-best-settings-detail.png docs/img/burst-from-idle-detail.png

## make demo: the emulators, both functions invoked on the sample events, what they did.
## Builds only the programs it and make invoke run, in one cargo call (so their features resolve once).
DEMO_PACKAGES := -p backlog-publisher -p batch-consumer -p sqs-worker -p sqs-backpressure -p e2e-tests
DEMO_BINS := backlog-publisher batch-consumer sqs-worker sqs-backpressure demo local-env lambda-invoke
DEMO_BUILD = $(CARGO) build $(DEMO_PACKAGES) $(addprefix --bin ,$(DEMO_BINS))
demo:
	@echo "== make demo 1/3: building $(DEMO_BINS) (the first time about 2 minutes on 2 cores, after downloading the crates)"
	$(DEMO_BUILD)
	@echo "== make demo 2/3: the emulators, into $(CACHE_ROOT) (the first time about 3 minutes)"
	$(EMULATORS) install
	@echo "== make demo 3/3: the tour (under a minute)"
	$(EMULATORS) run -- $(TARGET_DIR)/debug/demo

## make invoke FUNCTION=publisher|consumer EVENT=events/<file>.json [KEEP=1]: one function
## through cargo-lambda (watch + invoke) against the emulators, with the template's default
## settings; prints its response and each message's outcome. KEEP=1 leaves the emulators up,
## their queues inspectable with the CLI.
## make invoke BINARY=path/to/your-function EVENT=… [ENV_FILE=yours.env]: a Lambda function
## binary of yours, the same way, under lambda-invoke (this repository's Runtime API host; no
## cargo-lambda needed), with your NAME=VALUE lines after the consumer's.
FUNCTION ?= publisher
EVENT ?= $(if $(BINARY),events/sqs-standard.json,events/schedule.json)
invoke:
	@echo "== make invoke: building $(DEMO_BINS) as make demo does (nothing to do after it)"
	$(DEMO_BUILD)
	$(if $(BINARY),,scripts/sam.sh install)
	$(EMULATORS) install
ifeq ($(KEEP),1)
	$(EMULATORS) start
	. .emulators/env && KEEP=1 scripts/invoke.sh $(or $(BINARY),$(FUNCTION)) $(EVENT)
else
	$(EMULATORS) run -- scripts/invoke.sh $(or $(BINARY),$(FUNCTION)) $(EVENT)
endif

## make rehearse SET=your-set.json [KEEP=1]: your parameter set deployed from template.yaml on the
## emulators (an ecs set on moto, any other on LocalStack), read back and deleted
rehearse:
	@test -n "$(SET)" || { echo "make rehearse: give your parameter set, as SET=path/to/set.json"; exit 2; }
	@echo "== make rehearse: building the functions' binaries as make demo does"
	$(DEMO_BUILD)
	scripts/sam.sh install
	$(EMULATORS) install
ifeq ($(KEEP),1)
	$(EMULATORS) start
	. .emulators/env && KEEP=1 .venv-sam/bin/python scripts/rehearse.py $(SET) $(TARGET_DIR)
else
	$(EMULATORS) run -- .venv-sam/bin/python scripts/rehearse.py $(SET) $(TARGET_DIR)
endif

## make build: release binaries with cargo-lambda, arm64 when the aarch64 target is installed
ARCH := $(shell rustup target list --installed 2>/dev/null | grep -q aarch64-unknown-linux-gnu && echo arm64 || echo x86_64)
build:
	scripts/sam.sh install
	PATH="$(CURDIR)/.venv-sam/bin:$$PATH" $(CARGO) lambda build --release $(if $(filter arm64,$(ARCH)),--arm64,--x86-64) \
	  --bin backlog-publisher --bin batch-consumer
	@ls -l $(TARGET_DIR)/lambda/*/bootstrap
	@echo "built for $(ARCH); deploy with Architecture=$(ARCH)"

## make deploy: sam build, then a guided deploy (asks for the parameters, saves samconfig.toml)
deploy:
	scripts/sam.sh build --parameter-overrides Architecture=$(ARCH)
	scripts/sam.sh deploy --guided --capabilities CAPABILITY_IAM --parameter-overrides Architecture=$(ARCH)

## make worker-image: the sqs-worker container image (Dockerfile). Needs a container engine,
## which our CI machines do not have; the gate runs the Dockerfile's cargo command (builds-alone).
WORKER_IMAGE ?= sqs-worker:latest
worker-image:
	docker build --tag $(WORKER_IMAGE) .

emulators:
	$(EMULATORS) start

emulators-stop:
	$(EMULATORS) stop

release:
	$(CARGO) build --release -p backlog-publisher -p batch-consumer
	@ls -l $(TARGET_DIR)/release/backlog-publisher $(TARGET_DIR)/release/batch-consumer

## make bench: cold start, throughput, engine overhead, publisher fan-out and size, next to the
## usual Python tools (Powertools, boto3) on this machine; the table goes to bench/results/latest.md.
## Installs nginx and wrk (Debian) and the Python anchors (.venv-bench/). Not part of `make test` or the gate.
bench:
	bench/run.sh

## make soak: one warm process of each function, SOAK_INVOCATIONS (2000) consecutive invocations
## with mixed outcomes and injected faults; RSS, open fds and every message id counted.
## The table goes to target/soak/latest.md. Not part of `make test` or the gate.
SOAK_INVOCATIONS ?= 2000
soak:
	$(CARGO) build --workspace --bins
	$(EMULATORS) install
	LAMBDA_HOST_QUIET=1 $(EMULATORS) run -- $(CARGO) run --quiet -p sqs-backpressure-bench --bin soak -- \
	  --invocations $(SOAK_INVOCATIONS) --out target/soak/latest.md

## make fuzz: every fuzz target under AFL++ (cargo-afl, stable toolchain) for FUZZ_SECONDS (60)
## each, from the committed corpus; findings go to target/fuzz/. `make test` replays the corpus.
FUZZ_SECONDS ?= 60
fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	$(EMULATORS) stop
	rm -rf .emulators
