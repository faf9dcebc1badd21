# The one test command: `.ci/run` calls `make test`, and so should you.
GO ?= go

.PHONY: test test-unit test-norace build run generate fmt vet lint fuzz

# The end-to-end tests are a Go module of their own, so that the Go clients only they use
# (sarama, kafka-go) stay out of the gateway's go.mod. Every Go target covers both modules.
E2E_MODULE := internal/e2e

# Installs the pinned real Kafka clients (scripts/install-test-deps.sh) and runs every test,
# end-to-end tests included: with IGGYGW_E2E_REQUIRED=1 a missing client fails instead of skipping.
# -count=1: results are never taken from Go's test cache (the end-to-end suite must really run
# with the clients of this machine, and it writes the results the compatibility check reads).
# Both modules run even when the first fails, so one run shows every failure.
test:
	@if [ -f scripts/install-test-deps.sh ]; then bash scripts/install-test-deps.sh; fi
	@status=0; \
	$(MAKE) --no-print-directory test-norace || status=1; \
	for dir in . $(E2E_MODULE); do \
		echo "PATH=.cache/venv/bin:\$$PATH IGGYGW_E2E_REQUIRED=1 $(GO) -C $$dir test -race -count=1 -timeout 30m ./..."; \
		PATH="$(CURDIR)/.cache/venv/bin:$$PATH" IGGYGW_E2E_REQUIRED=1 $(GO) -C $$dir test -race -count=1 -timeout 30m ./... || status=1; \
	done; \
	exit $$status

# Unit and integration tests only, without installing clients (end-to-end tests may skip).
test-unit: test-norace
	$(GO) test -race -short ./...
	$(GO) -C $(E2E_MODULE) test -race -short ./...

# The packages with tests that the race detector makes meaningless (allocation counts): those
# tests skip under -race (testutil.RaceEnabled), so test and test-unit run these packages once
# more without it. Found by that guard, so a new such test is covered without listing it here.
NORACE_PKGS = $(shell grep -rl --include='*_test.go' --exclude-dir=e2e 'testutil.RaceEnabled' cmd internal | xargs -n1 dirname | sort -u | sed 's|^|./|')

test-norace:
	@if [ -z "$(NORACE_PKGS)" ]; then echo "no test uses testutil.RaceEnabled: is the grep in the Makefile stale?"; exit 1; fi
	$(GO) test -count=1 $(NORACE_PKGS)

build:
	$(GO) build -o bin/iggy-gateway-kafka ./cmd/iggy-gateway-kafka

# Dev mode: gateway on 127.0.0.1:9093 with an in-memory Iggy on 127.0.0.1:8090.
run:
	$(GO) run ./cmd/iggy-gateway-kafka --dev

# Regenerates the tables in docs/ from the code (tests fail when they are stale).
generate:
	$(GO) generate ./internal/versions ./internal/config ./internal/metrics ./internal/auth

fmt:
	@out=$$(gofmt -l cmd internal); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	$(GO) -C $(E2E_MODULE) vet ./...

# What CI checks besides the tests: go.mod tidy, gofmt, go vet and staticcheck (pinned, installed
# from the Go module proxy into the Go bin directory).
STATICCHECK_VERSION ?= v0.8.2
lint: fmt vet
	$(GO) mod tidy -diff
	$(GO) -C $(E2E_MODULE) mod tidy -diff
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	"$$($(GO) env GOPATH)/bin/staticcheck" ./...
	cd $(E2E_MODULE) && "$$($(GO) env GOPATH)/bin/staticcheck" ./...

# Short fuzz run of the Kafka request path (the corpus in testdata/fuzz replays in every test run).
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseFrame -fuzztime 60s ./internal/listener
