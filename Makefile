# The commands people type. Everything installs what it needs itself: the
# emulators into .venv/, Rust crates into the cargo cache.

CARGO ?= cargo
EMULATORS := scripts/emulators.sh
# cargo-nextest prints the closing summary CI counts; plain cargo test otherwise.
TEST_RUNNER := $(shell $(CARGO) nextest --version >/dev/null 2>&1 && echo "nextest run" || echo test)

.PHONY: test demo lint template-lint unit invoke build deploy emulators emulators-stop coldstart load release clean

## make test: formatting, lints, template checks, unit and adapter tests, end-to-end tests
test: lint template-lint
	$(CARGO) build --workspace --bins
	$(EMULATORS) install
	$(EMULATORS) run -- $(CARGO) $(TEST_RUNNER) --workspace

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## cfn-lint and `sam validate --lint` (pinned, in .venv-sam/)
template-lint:
	scripts/sam.sh lint

## make unit: the tests that need no emulator
unit:
	$(CARGO) $(TEST_RUNNER) -p backpressure-core -p backlog-publisher -p batch-consumer

## make demo: the emulators, both functions invoked on the sample events, what they did
demo:
	$(CARGO) build --workspace --bins
	$(EMULATORS) install
	$(EMULATORS) run -- $(CARGO) run --quiet -p e2e-tests --bin demo

## make invoke FUNCTION=publisher|consumer EVENT=events/<file>.json: one function through
## cargo-lambda (watch + invoke) against the emulators; prints its response
FUNCTION ?= publisher
EVENT ?= events/schedule.json
invoke:
	$(CARGO) build --quiet -p e2e-tests --bin local-env
	scripts/sam.sh install
	$(EMULATORS) install
	$(EMULATORS) run -- scripts/invoke.sh $(FUNCTION) $(EVENT)

## make build: release binaries with cargo-lambda, arm64 when the aarch64 target is installed
ARCH := $(shell rustup target list --installed 2>/dev/null | grep -q aarch64-unknown-linux-gnu && echo arm64 || echo x86_64)
build:
	scripts/sam.sh install
	PATH="$(CURDIR)/.venv-sam/bin:$$PATH" $(CARGO) lambda build --release $(if $(filter arm64,$(ARCH)),--arm64,--x86-64) \
	  --bin backlog-publisher --bin batch-consumer
	@ls -l target/lambda/*/bootstrap
	@echo "built for $(ARCH); deploy with Architecture=$(ARCH)"

## make deploy: sam build, then a guided deploy (asks for the parameters, saves samconfig.toml)
deploy:
	scripts/sam.sh build --parameter-overrides Architecture=$(ARCH)
	scripts/sam.sh deploy --guided --capabilities CAPABILITY_IAM --parameter-overrides Architecture=$(ARCH)

emulators:
	$(EMULATORS) start

emulators-stop:
	$(EMULATORS) stop

release:
	$(CARGO) build --release -p backlog-publisher -p batch-consumer
	@ls -l target/release/backlog-publisher target/release/batch-consumer

## make coldstart: process start → first Runtime API request, release builds, 20 starts each
coldstart: release
	$(CARGO) build --quiet -p e2e-tests --bin cold-start
	LAMBDA_HOST_QUIET=1 AWS_REGION=us-east-1 target/debug/cold-start target/release/backlog-publisher 20 \
	  QUEUE_URL=https://sqs.us-east-1.amazonaws.com/123456789012/work ECS_CLUSTER_NAME=c ECS_SERVICE_NAME=s
	LAMBDA_HOST_QUIET=1 AWS_REGION=us-east-1 target/debug/cold-start target/release/batch-consumer 20 \
	  DOWNSTREAM_URL=http://127.0.0.1:9/work \
	  QUARANTINE_QUEUE_URL=https://sqs.us-east-1.amazonaws.com/123456789012/quarantine

## make load: batch-consumer (release) on a 5,000-message, ~6 MB batch to a local downstream
load: release
	$(CARGO) build --quiet -p e2e-tests --bin consumer-load
	LAMBDA_HOST_QUIET=1 AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local \
	  target/debug/consumer-load target/release/batch-consumer 5

clean:
	$(EMULATORS) stop
	rm -rf .emulators
