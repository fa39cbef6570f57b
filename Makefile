# The commands people type. Everything installs what it needs itself: the
# emulators into .venv/, Rust crates into the cargo cache.

CARGO ?= cargo
EMULATORS := scripts/emulators.sh
# cargo-nextest prints the closing summary CI counts; plain cargo test otherwise.
TEST_RUNNER := $(shell $(CARGO) nextest --version >/dev/null 2>&1 && echo "nextest run" || echo test)

.PHONY: test demo lint unit e2e emulators emulators-stop coldstart release clean

## make test: formatting, lints, unit and adapter tests, end-to-end tests on the emulators
test: lint
	$(CARGO) build --workspace --bins
	$(EMULATORS) install
	$(EMULATORS) run -- $(CARGO) $(TEST_RUNNER) --workspace

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## make unit: the tests that need no emulator
unit:
	$(CARGO) $(TEST_RUNNER) -p backpressure-core -p backlog-publisher

## make demo: both emulators, the publisher invoked on events/schedule.json, metrics read back
demo:
	$(CARGO) build --workspace --bins
	$(EMULATORS) install
	$(EMULATORS) run -- $(CARGO) run --quiet -p e2e-tests --bin demo

emulators:
	$(EMULATORS) start

emulators-stop:
	$(EMULATORS) stop

release:
	$(CARGO) build --release -p backlog-publisher
	@ls -l target/release/backlog-publisher

## make coldstart: process start → first Runtime API request, release build, 20 starts
coldstart: release
	$(CARGO) build --quiet -p e2e-tests --bin cold-start
	LAMBDA_HOST_QUIET=1 AWS_REGION=us-east-1 target/debug/cold-start target/release/backlog-publisher 20 \
	  QUEUE_URL=https://sqs.us-east-1.amazonaws.com/123456789012/work ECS_CLUSTER_NAME=c ECS_SERVICE_NAME=s

clean:
	$(EMULATORS) stop
	rm -rf .emulators
