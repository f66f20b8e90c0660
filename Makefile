# tokensieve: every target sets itself up (dependencies, Rust build) and is a quick no-op
# when nothing changed.
#
# Third-party packages (torch alone is gigabytes) live in one environment per hash of
# requirements.txt under $(CACHE), shared by every clone; each clone has its own small
# .venv that sees them through a .pth line and holds the editable build of this project.

SHELL := /bin/bash
PYTHON ?= python3
CACHE ?= $(HOME)/.cache/tokensieve
export CARGO_TARGET_DIR ?= $(CACHE)/target
export TOKENSIEVE_CACHE ?= $(CACHE)

REQ_HASH := $(shell sha256sum requirements.txt | cut -c1-12)
DEPS := $(CACHE)/deps-$(REQ_HASH)
VENV := .venv
PY := $(VENV)/bin/python
RUST_SRC := $(shell find engines -name '*.rs' -o -name Cargo.toml -o -name Cargo.lock) pyproject.toml \
	tokensdfa.pyi

BENCH_VOCABS ?= llama3,tekken
# transformers-cfg is left out of the default: its pure-Python masks take seconds a cell on
# grammars (it reads nothing else), past make bench's budget; add it with BENCH_ENGINES
ENGINES_ALL := naive,outlines-core,llguidance,xgrammar,lm-format-enforcer,formatron
BENCH_ENGINES ?= $(ENGINES_ALL),tokensdfa,tokensdfa-canonical,tokensdfa-lazy,tokensdfa-pushdown
# `make bench` fits about 15 minutes on 2 cores: at most BENCH_LIMIT specs per corpus set
# (evenly spaced over the set) and BENCH_TIMEOUT seconds per cell; BENCH_FLAGS adds any
# other `tokensieve bench` option (e.g. BENCH_FLAGS="--run nightly").
BENCH_LIMIT ?= 8
# the default corpus sets and the grammar set
BENCH_SETS ?= outlines-bench,llm-formats,pathological,handwritten,schemastore,grammars
BENCH_TIMEOUT ?= 30
BENCH_FLAGS ?=

.PHONY: setup build test test-rust test-python bench fuzz lint clean gate dashboard diff \
	browser-deps docs wheel wheel-check

setup: $(VENV)/.linked

# No prerequisite: the path already names the content of requirements.txt, and a fresh
# clone's files are all newer than any stamp.
$(DEPS)/.complete:
	rm -rf $(DEPS)
	$(PYTHON) -m venv $(DEPS)
	$(DEPS)/bin/pip install --quiet --upgrade pip
	$(DEPS)/bin/pip install --quiet -r requirements.txt
	# transformers-cfg 0.2.7's wheel installs its own test suite as a top-level package
	# `tests`, which would shadow this project's tests (`python -m tests.code_size`,
	# `from tests.test_bad_inputs import ...`): removed, with nothing else of it
	rm -rf "$$($(DEPS)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/tests"
	touch $@

$(VENV)/.linked: $(DEPS)/.complete
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	purelib='import sysconfig; print(sysconfig.get_paths()["purelib"])'; \
	echo "import site; site.addsitedir('$$($(DEPS)/bin/python -c "$$purelib")')" \
		> "$$($(PY) -c "$$purelib")/_tokensieve_deps.pth"
	touch $@

# The editable install compiles the `tokensdfa` extension and puts `harness` and the
# `tokensieve` script on the path; rebuilt when Rust sources change.
$(VENV)/.built: $(VENV)/.linked $(RUST_SRC)
	$(PY) -m pip install --quiet --no-build-isolation --no-deps -e .
	touch $@

build: $(VENV)/.built

# Debian packages for the browser test (headless Chromium and its driver) and for the
# offline asv dashboard (the JavaScript libraries asv's page would load from CDNs; see
# harness/report/dashboard_offline.py). Installed when absent; a no-op otherwise.
BROWSER_DEBS := chromium chromium-driver libjs-jquery libghc-js-flot-data libjs-bootstrap \
	libjs-jquery-stupidtable node-blueimp-md5
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
browser-deps:
	@missing=""; for p in $(BROWSER_DEBS); do \
		dpkg-query -W -f='$${db:Status-Status}' $$p 2>/dev/null | grep -qx installed \
			|| missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "browser-deps: installing$$missing"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

test-rust: build
	cd engines && cargo test --release --quiet

test-python: build browser-deps
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(PY) -m pytest -q

test: test-rust test-python

bench: build
	$(VENV)/bin/tokensieve bench --vocab $(BENCH_VOCABS) --engines $(BENCH_ENGINES) \
		--corpus $(BENCH_SETS) --limit-specs $(BENCH_LIMIT) --timeout $(BENCH_TIMEOUT) \
		--scaling $(BENCH_FLAGS)

# The wheel and the sdist maturin builds, into dist/: `pip install dist/tokensieve-*.whl`.
wheel: setup
	rm -rf dist
	$(DEPS)/bin/maturin build --release --sdist --out dist --interpreter $(DEPS)/bin/python

# tokensieve as a user installs it (CI runs it): the wheel in a fresh virtual environment
# with only the llguidance and vocabulary extras, from PyPI, then `tokensieve check`,
# `engines` and `export` from a scratch directory (tests/installed_check.py says what).
WHEEL_VENV ?= dist/venv
wheel-check: wheel
	rm -rf $(WHEEL_VENV)
	$(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/pip install --quiet --upgrade pip
	$(WHEEL_VENV)/bin/pip install --quiet "$$(ls dist/*.whl)[llguidance,vocabs]"
	$(PYTHON) tests/installed_check.py $(WHEEL_VENV)

# The regression gate CI runs after the tests: side-by-side ratios against
# benchmarks/thresholds.toml (see docs/guides/ci-gate.md).
gate: build
	$(VENV)/bin/tokensieve gate

# asv on the current commit; results accumulate in reports/asv/results (one file per
# commit), and the HTML (reports/asv/html) shows their history. ASV_FLAGS adds asv run
# options, e.g. ASV_FLAGS=--quick.
ASV := $(PY) -m asv
ASV_MACHINE ?= $(shell hostname)
ASV_FLAGS ?=
dashboard: build browser-deps
	$(ASV) machine --yes --machine $(ASV_MACHINE) > /dev/null
	$(ASV) run --environment existing:$(abspath $(PY)) --machine $(ASV_MACHINE) \
		--set-commit-hash $$(git rev-parse HEAD) --show-stderr $(ASV_FLAGS)
	$(ASV) publish
	$(PY) -m harness.report.dashboard_offline reports/asv/html
	@echo "dashboard: reports/asv/html/index.html, offline (serve it with: $(ASV) preview)"

# The differential test over the default corpus on llama3 and tekken; DIFF_FLAGS adds
# `tokensieve diff` options (e.g. DIFF_FLAGS="--limit-specs 10").
DIFF_FLAGS ?=
diff: build
	$(VENV)/bin/tokensieve diff $(DIFF_FLAGS)

# The documentation site (mkdocs.yml, docs/), built offline with --strict (any warning,
# such as a broken link or a page missing from the nav, fails) into reports/docs-site/.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir reports/docs-site
	@echo "docs: reports/docs-site/index.html (opens over file://)"

fuzz: build
	cd engines && PROPTEST_CASES=20000 cargo test --release --quiet
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest -q tests

# ruff, the type checker (mypy, configured in pyproject.toml), module and function sizes
# (tests/code_size.py: 500 and 80 lines), the layer contract of harness/ (.importlinter),
# rustfmt and clippy (which also holds every Rust function to 80 lines: engines/clippy.toml).
lint: build
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m tests.code_size
	$(PY) -c "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())"
	cd engines && cargo fmt --all -- --check && cargo clippy --release --all-targets -- -D warnings

clean:
	rm -rf $(VENV) reports/*/
