# mcp-resume-guard task runner. Every output goes under build/ (git-ignored).
GO       ?= go
BUILD    := build
# This directory's module is the product: the plugin, the embedded host, the
# trial proxy and their tests. The rest are modules of their own, so that
# their dependencies stay out of the product's go.mod: the checks of the
# shipped Envoy, Istio and compose files against their platforms' own types
# (envoy/, envoy/gateway/), of the alert rules and the dashboard
# (deploy/monitoring/), and the tools that never ship (tools/: validate,
# oci, ocipush, bench, soak, doccheck; tools/release/: SBOM, signing, and
# the registry server its tests push to).
MANIFESTS    := envoy
GATEWAY      := envoy/gateway
MONITORING   := deploy/monitoring
TOOLS        := tools
RELEASE_TOOL := tools/release
SUBMODULES   := $(MANIFESTS) $(GATEWAY) $(MONITORING) $(TOOLS) $(RELEASE_TOOL)
# $(call tool,NAME): builds the tools module's command NAME into build/bin/,
# to run from here, where the paths it is given mean what they say.
TOOLBIN    := $(BUILD)/bin
tool = $(GO) build -C $(TOOLS) -o $(CURDIR)/$(TOOLBIN)/$(1) ./$(1)
# The TypeScript SDK's SSE reader (eventsource-parser, pinned by its
# package-lock.json), which internal/clientoracle runs under node.
TSREADER := internal/clientoracle/tsreader
# The official MCP conformance suite and the node 22 it needs, pinned by
# its package-lock.json (internal/conformance/README.md says why node 22).
CONFORMANCE := internal/conformance
NPM      ?= npm
WASM     := $(BUILD)/mcp-resume-guard.wasm
FUZZTIME ?= 30s
# The build make build stamps into the plugin and make oci into the image's
# annotations: the closest tag (git describe; dev without one), the commit.
VERSION  ?= $(shell git describe --tags --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
SOURCE   ?= https://github.com/mcp-resume-guard/mcp-resume-guard
# Where releases publish the image (make release writes it into the notes).
IMAGE    ?= ghcr.io/mcp-resume-guard/mcp-resume-guard
# make release: DRY_RUN=1 checks and prints the plan, changing nothing;
# SIGN_KEY=cosign.key (its password in COSIGN_PASSWORD) signs the files.
DRY_RUN  ?=
SIGN_KEY ?=

.PHONY: all help build test e2e demo bench soak fuzz oci release validate check clean run

# make run: the trial proxy (cmd/guardproxy). UPSTREAM is your MCP server's
# base URL (empty: the reference server, started for you); ROUTES=paths
# swaps envoy.yaml's plugin configuration for envoy/plugin-config/paths.json
# and runs the plugin on every request, as an Istio WasmPlugin does.
UPSTREAM   ?=
ROUTES     ?= names
LISTEN     ?= 127.0.0.1:10000
ADMIN      ?= 127.0.0.1:9901
ENVOY      ?= envoy/envoy.yaml
GUARDPROXY ?= $(BUILD)/guardproxy
# More flags for make run (ARGS='-cut /mcp=4 -log-level debug'; go run
# ./cmd/guardproxy -h lists them), make bench (ARGS=-ab) or make soak.
ARGS       ?=
ifneq ($(filter run,$(MAKECMDGOALS)),)
ifeq ($(filter names paths,$(ROUTES)),)
$(error ROUTES=$(ROUTES): want names (envoy.yaml's plugin configuration, routes by name) or paths (envoy/plugin-config/paths.json))
endif
endif

all: build

## help: the targets and what they do
help:
	@echo "make TARGET [VARIABLE=value ...]; the default target is build"
	@awk '/^## [a-z0-9-]+:/ { t = $$2; sub(/:$$/, "", t); sub(/^## [a-z0-9-]+: /, ""); printf "  %-9s %s\n", t, $$0 }' $(firstword $(MAKEFILE_LIST))

## build: the plugin as a standard-Go WASI reactor (build/mcp-resume-guard.wasm), stamped with VERSION and COMMIT
build:
	$(GO) run ./internal/tools/wasmbuild -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o $(WASM) ./filter

## test: everything CI runs (unit, emulator, artifact, e2e, the official clients' SSE readers against the guard, the official conformance suite, deploy validation, alert rules and dashboard; the modules of SUBMODULES too); needs node ≥ 20 and npm
test: build tsreader conformance
	$(GO) vet ./...
	$(GO) test -count=1 -skip '^TestConformanceSuite$$' ./...
	@for m in $(SUBMODULES); do echo "cd $$m && go vet ./... && go test -count=1 ./..."; (cd $$m && $(GO) vet ./... && $(GO) test -count=1 ./...) || exit 1; done

# tsreader: npm ci of the node module the client-reader differential test
# runs (into its git-ignored node_modules; about 5 s, one package).
.PHONY: tsreader
tsreader:
	cd $(TSREADER) && $(NPM) ci --no-audit --no-fund --loglevel=error

## conformance: the official MCP conformance suite (pinned, npm ci) against the Go SDK's conformance server directly and through the trial proxy (every check alike), and its client through the trial proxy; one CONFORMANCE line per scenario
.PHONY: conformance
conformance: build $(CONFORMANCE)/node_modules/.package-lock.json
	$(GO) test -count=1 -v -run '^TestConformanceSuite$$' ./$(CONFORMANCE)/

# npm ci of the suite and its node into the git-ignored node_modules (236 MB,
# 185 of them node; about 20 s from a cold npm cache), again only when the
# pins change: npm ci writes node_modules/.package-lock.json last.
$(CONFORMANCE)/node_modules/.package-lock.json: $(CONFORMANCE)/package.json $(CONFORMANCE)/package-lock.json
	cd $(CONFORMANCE) && $(NPM) ci --no-audit --no-fund --loglevel=error

## e2e: the end-to-end scenarios against the built .wasm in the embedded host
e2e: build
	$(GO) test -count=1 -v ./e2e/

## demo: the seed scenario without and with the filter
demo: build
	$(GO) run ./cmd/demo -wasm $(WASM)

## run: the guard in front of UPSTREAM (default: the reference server) on LISTEN, admin on ADMIN, configured by ENVOY (envoy/envoy.yaml; ROUTES=paths: envoy/plugin-config/paths.json), more flags in ARGS (ARGS='-cut /mcp=4'); Ctrl-C stops it
run: build
	@$(GO) build -o $(GUARDPROXY) ./cmd/guardproxy
	$(GUARDPROXY) -wasm $(WASM) -envoy $(ENVOY) $(if $(filter paths,$(ROUTES)),-config envoy/plugin-config/paths.json -filter-all-routes )-listen $(LISTEN) -admin $(ADMIN) -upstream '$(UPSTREAM)'$(if $(ARGS), $(ARGS))

## bench: what the guard costs, in V8 and in the embedded host, and its performance budget against a baseline build (about 2 minutes on a 2-core machine); more flags in ARGS (ARGS=-ab: only the budget)
bench: build
	$(call tool,bench)
	$(TOOLBIN)/bench -dir $(BUILD)$(if $(ARGS), $(ARGS))

## soak: tool calls under faults (cuts, replica restarts, a flood of made-up sessions, the official Go SDK client) through 3 replicas of the trial proxy behind round robin, bounded to 10 minutes; ends with one SOAK line, fails on a lost result, a fail-open or growing guest memory
soak: build
	$(call tool,soak)
	$(TOOLBIN)/soak -wasm $(WASM) -envoy envoy/envoy.yaml -timeout 10m$(if $(ARGS), $(ARGS))

## fuzz: every fuzz target of every module (go test -list), each for FUZZTIME (default 30s); some run the built .wasm
fuzz: build
	@mkdir -p $(BUILD)
	@for m in . $(SUBMODULES); do \
		out=$$(cd $$m && $(GO) test -list '^Fuzz' ./...) || { echo "$$out"; exit 1; }; \
		echo "$$out" | awk -v m=$$m '/^Fuzz/ { f[n++] = $$1 } /^ok/ { for (i = 0; i < n; i++) print m, $$2, f[i]; n = 0 }'; \
	done > $(BUILD)/fuzz-targets.txt
	@while read -r mod pkg target; do \
		echo "fuzz: $$pkg $$target for $(FUZZTIME)"; \
		(cd $$mod && $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) "$$pkg") || exit 1; \
	done < $(BUILD)/fuzz-targets.txt

## oci: the plugin as an OCI image layout for Istio / Envoy Gateway (build/mcp-resume-guard-oci.tar), annotated with VERSION, COMMIT and SOURCE
oci: build
	$(call tool,oci)
	$(TOOLBIN)/oci -wasm $(WASM) -o $(BUILD)/mcp-resume-guard-oci.tar \
		-version $(VERSION) -revision $(COMMIT) -source $(SOURCE)

## release: build/release/ for VERSION=vX.Y.Z[-rc.N] from CHANGELOG.md's section: the stamped .wasm, its sha256, the OCI image layout, the SBOM, the notes (SIGN_KEY=cosign.key: cosign signatures); refuses first a missing section, [Unreleased] entries, a dirty tree or stale pins; DRY_RUN=1 only checks and shows the plan
release:
	cd $(RELEASE_TOOL) && $(GO) run . -check $(if $(DRY_RUN),-dry-run )-version '$(VERSION)' -repo '$(CURDIR)' \
		-wasm $(WASM) -oci $(BUILD)/mcp-resume-guard-oci.tar -image $(IMAGE) -o $(BUILD)/release$(if $(SIGN_KEY), -sign-key '$(SIGN_KEY)')
ifeq ($(DRY_RUN),)
	$(MAKE) --no-print-directory build oci VERSION=$(VERSION) COMMIT=$(COMMIT) SOURCE=$(SOURCE)
	cd $(RELEASE_TOOL) && $(GO) run . -version '$(VERSION)' -repo '$(CURDIR)' -wasm '$(CURDIR)/$(WASM)' \
		-oci '$(CURDIR)/$(BUILD)/mcp-resume-guard-oci.tar' -image $(IMAGE) -o '$(CURDIR)/$(BUILD)/release'$(if $(SIGN_KEY), -sign-key '$(abspath $(SIGN_KEY))')
endif

# make validate: CONFIG lists files and folders (CONFIG='envoy/ deploy/');
# OCI_TAR=build/mcp-resume-guard-oci.tar (make oci) makes every pinned
# digest answer for that image.
OCI_TAR ?=
## validate: checks CONFIG (files and folders; documents without the plugin are skipped) for what keeps the guard from running: the plugin configuration, its routes against the bootstrap's, fail-open settings, image digests (OCI_TAR: the built image's); errors at FILE:LINE:COLUMN
validate:
	@test -n '$(CONFIG)' || { echo "make validate: CONFIG='FILE_OR_FOLDER ...' is missing"; exit 2; }
	$(call tool,validate)
	$(TOOLBIN)/validate $(if $(OCI_TAR),-image '$(OCI_TAR)' )$(CONFIG)

# go mod tidy reads imports for every platform, so it needs modules that
# make test never downloaded; offline, check skips it where the module cache
# lacks them and says so (ONLINE=1 lets it download them).
ONLINE ?=
TIDY = $(if $(ONLINE),$(GO) mod tidy -diff,out=$$(GOPROXY=off $(GO) mod tidy -diff 2>&1); rc=$$?; \
	if [ $$rc -ne 0 ] && echo "$$out" | grep -q 'GOPROXY=off'; then echo "go mod tidy -diff: skipped, the module cache lacks modules it reads (make check ONLINE=1 downloads them)"; \
	else [ -z "$$out" ] || echo "$$out"; exit $$rc; fi)

## check: fails on gofmt, go vet or go mod tidy differences (offline once make test has run; ONLINE=1 lets go mod tidy download what it reads)
check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@$(TIDY)
	@for m in $(SUBMODULES); do echo "cd $$m && go vet ./... && go mod tidy -diff"; (cd $$m && $(GO) vet ./... && $(TIDY)) || exit 1; done

## clean: removes build/
clean:
	rm -rf $(BUILD)
