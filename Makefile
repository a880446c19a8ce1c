# mcp-resume-guard task runner. Every output goes under build/ (git-ignored).
GO       ?= go
BUILD    := build
WASM     := $(BUILD)/mcp-resume-guard.wasm
FUZZTIME ?= 30s

.PHONY: all build test e2e demo bench fuzz oci check clean

all: build

## build: the plugin as a standard-Go WASI reactor (build/mcp-resume-guard.wasm)
build:
	$(GO) run ./internal/tools/wasmbuild -o $(WASM) ./filter

## test: everything CI runs (unit, emulator, artifact, e2e, deploy validation; envoy/gateway is a module of its own)
test: build
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	cd envoy/gateway && $(GO) vet ./... && $(GO) test -count=1 ./...

## e2e: the end-to-end scenarios against the built .wasm in the embedded host
e2e: build
	$(GO) test -count=1 -v ./e2e/

## demo: the seed scenario without and with the filter
demo: build
	$(GO) run ./cmd/demo -wasm $(WASM)

## bench: the plugin side by side with its baselines in the embedded host (about 2 minutes); ends with the seven BENCH lines
bench: build
	$(GO) run ./internal/tools/bench -dir $(BUILD)

## fuzz: every fuzz target of the module (go test -list), each for FUZZTIME (default 30s)
fuzz:
	@mkdir -p $(BUILD)
	@$(GO) test -list '^Fuzz' ./... | awk '/^Fuzz/ { f[n++] = $$1 } /^ok/ { for (i = 0; i < n; i++) print $$2, f[i]; n = 0 }' > $(BUILD)/fuzz-targets.txt
	@while read -r pkg target; do \
		echo "fuzz: $$pkg $$target for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) "$$pkg" || exit 1; \
	done < $(BUILD)/fuzz-targets.txt

## oci: the plugin as an OCI image layout for Istio / Envoy Gateway (build/mcp-resume-guard-oci.tar)
oci: build
	$(GO) run ./internal/tools/oci -wasm $(WASM) -o $(BUILD)/mcp-resume-guard-oci.tar

## check: fails on gofmt, go vet or go mod tidy differences
check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff
	cd envoy/gateway && $(GO) vet ./... && $(GO) mod tidy -diff

clean:
	rm -rf $(BUILD)
