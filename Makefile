# masklens — two set-up commands: `make run` and `make test` (both bootstrap .venv).
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.masklens-installed
LAUNCHER_STAMP := $(VENV)/.masklens-launcher

.PHONY: setup run test test-fast test-bundle bundle bench bench-gpu bench-models lint fuzz demo docs clean

setup: $(STAMP) $(LAUNCHER_STAMP)

# torch/torchvision first (the index has no CPU-only torchvision; the regular build
# runs on CPU too), then Meta's sam2 built against that torch, then the project with every
# extra (`[all]`: gui, models, sam2, ray) and the dev tools; last, Meta's `sam3` package without its
# dependencies (timm and the rest): the tests read its cgF1 evaluator file, never its model code.
$(STAMP): pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip setuptools wheel
	$(BIN)/python -m pip install -q --disable-pip-version-check torch torchvision
	@$(BIN)/python -c "import importlib.util,sys; sys.exit(importlib.util.find_spec('sam2') is None)" || \
	  SAM2_BUILD_CUDA=0 $(BIN)/python -m pip install -q --disable-pip-version-check --no-build-isolation sam2
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[all,dev]'
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps 'sam3==0.1.4'
	@touch $(STAMP)

# `.venv/bin/masklens` is a small C launcher (packaging/launcher.c) in front of pip's console
# script, which moves to .venv/libexec/masklens: it blocks SIGINT before the Python interpreter
# starts, so that a Ctrl+C in the interpreter's first milliseconds (before any masklens code
# runs) is still masklens' "interrupted", exit 130, not a KeyboardInterrupt traceback.
# Redone after every pip install above (pip rewrites the script); without a C compiler one line
# says so and pip's script stays.
$(LAUNCHER_STAMP): $(STAMP) packaging/launcher.c packaging/launcher.py
	$(BIN)/python packaging/launcher.py venv $(VENV)
	@touch $(LAUNCHER_STAMP)

run: setup
	$(BIN)/masklens gui --demo

test: setup
	@QT_QPA_PLATFORM=offscreen MPLBACKEND=Agg $(BIN)/python -m pytest -q; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests — that is a failure" >&2; fi; exit $$rc

# everything but the tests marked slow (model and install tests, fuzzing, real processes)
test-fast: setup
	@QT_QPA_PLATFORM=offscreen MPLBACKEND=Agg $(BIN)/python -m pytest -q -m "not slow"; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "make test-fast: pytest collected no tests — that is a failure" >&2; fi; exit $$rc

# the desktop bundle (packaging/bundle.py): a PyInstaller one-folder build of the core and the
# window (no torch), its `masklens` the launcher above, packed with the desktop files into
# build/bundle/masklens-VERSION-linux-ARCH.tar.gz
bundle: setup
	$(BIN)/python packaging/bundle.py

# the bundle as a machine without Python runs it (tests/packaging/test_bundle.py)
test-bundle: bundle
	@QT_QPA_PLATFORM=offscreen MPLBACKEND=Agg MASKLENS_BUNDLE="$$(ls build/bundle/masklens-*.tar.gz | head -1)" \
	  $(BIN)/python -m pytest -q tests/packaging

# every tests/benchmarks/bench_*.py, their printed figures written to docs/benchmarks.md
bench: setup
	$(BIN)/python tools/bench_page.py

bench-gpu: setup
	$(BIN)/python tests/benchmarks/gpu_models.py
	$(BIN)/python tests/benchmarks/models_bench.py --device cuda --no-gui --backends $(BACKENDS)

# the model backends at real size (random weights built once) on the CPU; not part of `make bench`
# (a real-size SAM 3 prompt takes minutes on 2 cores): BACKENDS=clipseg,owlv2-sam2 make bench-models
BACKENDS ?= clipseg,owlv2-sam2,grounded-sam2,sam3
bench-models: setup
	$(BIN)/python tests/benchmarks/models_bench.py --device cpu --backends $(BACKENDS)

# the full mutation fuzzer (tests/fuzz/), then the full hostile matrix (every writing command ×
# every hostile target, every store-reading command × every hostile store); `make test` runs a
# fixed-seed subset of the fuzzer and a trimmed matrix
fuzz: setup
	@QT_QPA_PLATFORM=offscreen MPLBACKEND=Agg $(BIN)/python tests/fuzz/run_fuzz.py
	@QT_QPA_PLATFORM=offscreen MPLBACKEND=Agg $(BIN)/python tests/hardening/hostile_matrix.py

# ruff, the import contracts of pyproject.toml (README, Code map), then the type checker (mypy)
lint: setup
	$(BIN)/ruff check core gui tests packaging tools
	$(BIN)/lint-imports
	$(BIN)/python tools/typecheck.py

demo: setup
	$(BIN)/python tools/demo/make_demo.py

# the docs site (mkdocs.yml) into site/, strict: a broken link or API reference fails. griffe
# reads masklens.core's source through a link folder (build/docs-api/masklens/core → core/).
docs: setup
	@mkdir -p build/docs-api/masklens && ln -sfn ../../../core build/docs-api/masklens/core
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache .ruff_cache
