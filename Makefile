# The project's entry points. `make help` lists them.
#
# Every version is pinned in versions.env; every tool is built from Go modules
# into ./bin by `make tools`. Nothing else is downloaded.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
include $(ROOT)/versions.env

export LOCALBIN ?= $(ROOT)/bin
export CLUSTER_WORKDIR ?= $(ROOT)/.cache
# The cluster provider: kwok (offline, the default), kind (Docker) or existing (KUBECONFIG).
CLUSTER ?= kwok
export CLUSTER_NAME ?= k8s-demo
# `make e2e` is the user's "make e2e against kind": kind unless CLUSTER is given.
E2E_CLUSTER := $(if $(filter command line environment environment override,$(origin CLUSTER)),$(CLUSTER),kind)
# Where the e2e suites run the demos' controllers: in the cluster (make
# docker-build, load the image, make deploy) on kind, beside it (make run) elsewhere.
E2E_MANAGERS ?= $(if $(filter kind,$(E2E_CLUSTER)),in-cluster,out-of-cluster)

# The Go modules of the repository (each builds alone with GOWORK=off).
MODULES := $(patsubst %/go.mod,%,$(wildcard */go.mod))
DEMOS := $(filter-out e2e tools bench doctools,$(MODULES))

CLUSTER_CLI := $(LOCALBIN)/e2e-cluster
# The e2e suites `make e2e` runs (e.g. E2E_PACKAGES="./network ./custompod").
E2E_PACKAGES ?= ./...
# The bench's kwok cluster: fake nodes that take every pod of N = 1000
# (3000), where a kubelet takes 110.
BENCH_NODES ?= 4
BENCH_NODE_PODS ?= 1000

##@ Getting started

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m [CLUSTER=kwok|kind|existing] [CLUSTER_NAME=...]\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

.PHONY: demo
demo: tools cluster-cli ## Bring the local cluster up and run every walkthrough, narrated (KEEP=0 tears it down after).
	@CLUSTER=$(CLUSTER) scripts/demo.sh

.PHONY: test
test: ## What proves the code (Go alone): make verify, every module's tests, the e2e suites on a kwok cluster (-short), make lint.
	@scripts/test.sh test

##@ Tools

.PHONY: tools
tools: ## Build every pinned tool into ./bin (skips those already at their pinned version).
	@scripts/tools.sh

.PHONY: sync-versions
sync-versions: ## Rewrite tools/go.mod after a change to versions.env.
	@scripts/sync-versions.sh

.PHONY: outdated
outdated: ## Ask the Go module proxy for releases newer than each pin of versions.env (changes nothing).
	@scripts/outdated.sh

.PHONY: verify
verify: cluster-cli ## Fail when a go.mod, a generated file or gofmt disagrees with what it should be.
	@scripts/verify.sh

.PHONY: scaffold-patches
scaffold-patches: ## After an intended change to a scaffold file: write scripts/scaffold/*/patches again, then check.
	@scripts/scaffold-check.sh -update

##@ Cluster

.PHONY: cluster-cli
cluster-cli:
	@cd e2e && GOWORK=off go build -o $(CLUSTER_CLI) ./cmd/cluster

.PHONY: cluster-up
cluster-up: cluster-cli ## Create the cluster, or start it again (CLUSTER=kwok|kind|existing).
	@if [ "$(CLUSTER)" = kwok ]; then scripts/tools.sh; fi
	@CLUSTER=$(CLUSTER) $(CLUSTER_CLI) up

.PHONY: cluster-down
cluster-down: cluster-cli ## Delete the cluster and everything it left on the machine.
	@CLUSTER=$(CLUSTER) $(CLUSTER_CLI) down

.PHONY: registry-up
registry-up: cluster-cli ## The articles' local registry, for a kind cluster: push to localhost:5001, and the nodes pull from it.
	@scripts/tools.sh registry
	@CLUSTER=kind $(CLUSTER_CLI) registry-up

.PHONY: registry-down
registry-down: cluster-cli ## Remove the local registry, and the images pushed to it.
	@CLUSTER=kind $(CLUSTER_CLI) registry-down

.PHONY: kind-node-image
kind-node-image: ## Build the offline kind node image (Debian packages and Go modules only; cached). Needs Docker and debootstrap.
	@scripts/kind-node-image.sh

.PHONY: kind-node-image-tag
kind-node-image-tag: ## Print the offline node image's tag: KIND_NODE_IMAGE=$$(make -s kind-node-image-tag)
	@scripts/kind-node-image.sh --tag

.PHONY: env
env: cluster-cli ## Print the exports that point a terminal at the cluster and the pinned tools: eval "$$(make -s -C <repository> env)"
	@CLUSTER=$(CLUSTER) $(CLUSTER_CLI) env

.PHONY: kubeconfig
kubeconfig: cluster-cli ## Print the cluster's kubeconfig path: export KUBECONFIG=$$(make -s kubeconfig)
	@CLUSTER=$(CLUSTER) $(CLUSTER_CLI) kubeconfig

##@ Tests

# -p 1: one package at a time (see scripts/test.sh's e2e_suites).
.PHONY: e2e
e2e: tools cluster-cli ## The e2e suites alone, on CLUSTER (kind unless given: controllers deployed in-cluster; CLUSTER=kwok offline). Creates the cluster if needed and removes only what it created.
	@cd e2e && GOWORK=off go run ./cmd/preflight
	@cd e2e && CLUSTER=$(E2E_CLUSTER) E2E_MANAGERS=$(E2E_MANAGERS) $(CLUSTER_CLI) run -- go test -count=1 -p 1 -parallel 4 -timeout 45m $(E2E_PACKAGES)

.PHONY: test-extended
test-extended: ## The robustness drills make test leaves out, the kwok provider's and the bench's own tests, on CLUSTER (kwok unless given).
	@CLUSTER=$(CLUSTER) scripts/test.sh extended

.PHONY: test-docs
test-docs: ## The docs as people meet them: the site in headless Chromium, every chapter typed into terminals (needs tmux, zsh, Chromium, npm).
	@scripts/test.sh docs

.PHONY: reader
reader: tools ## Follow every chapter of docs/ as a reader types it: tmux terminals, bash and zsh, fresh clones (make test-docs runs it).
	@cd doctools && GOWORK=off go test -tags reader -count=1 -timeout 120m ./reader

.PHONY: workshop-check
workshop-check: cluster-cli ## A workshop checkpoint: prints OK, or what is missing (CHECK=start|concepts|...|end; docs/workshop.md).
	@scripts/workshop.sh check $(CHECK)

.PHONY: workshop-reset
workshop-reset: cluster-cli ## Put the cluster and the demos' files back to the start of any workshop slot (after a Ctrl-C mid-exercise too).
	@scripts/workshop.sh reset

.PHONY: bench
bench: tools cluster-cli ## Measure the three approaches side by side on a kwok cluster of its own; writes docs/bench.md and docs/bench.png (BENCH_FLAGS=-h lists the options).
	@cd bench && CLUSTER=kwok CLUSTER_NODES=$(BENCH_NODES) CLUSTER_NODE_PODS=$(BENCH_NODE_PODS) go run . $(BENCH_FLAGS)

.PHONY: lint
lint: ## Run golangci-lint on every module (builds it on first use).
	@scripts/tools.sh golangci-lint
	@failed=; for m in $(MODULES); do echo ">> lint $$m"; (cd $$m && GOWORK=off $(LOCALBIN)/golangci-lint run ./...) || failed="$$failed $$m"; done; \
	if [ -n "$$failed" ]; then echo "lint: golangci-lint found issues in:$$failed"; exit 1; fi

.PHONY: clean
clean: ## Remove the built tools, caches and test artifacts (run cluster-down first).
	rm -rf $(LOCALBIN) $(ROOT)/.cache $(ROOT)/_artifacts

##@ Docs

.PHONY: docs
docs: ## Build the tutorial as a site, in English and Chinese, into .cache/site/public (Hugo, from Go modules).
	@scripts/docs.sh build

.PHONY: docs-serve
docs-serve: ## Build the site and serve it on http://127.0.0.1:1313/ (DOCS_ADDR=host:port).
	@scripts/docs.sh serve

.PHONY: diagrams
diagrams: ## Render docs/diagrams/*.d2 into the .svg files the pages show (make verify checks them).
	@scripts/docs.sh diagrams
