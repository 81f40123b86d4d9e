# Two commands do all the set-up: `make site` and `make test` (see README.md).
SHELL := /bin/bash
VENV ?= .venv
# Every command runs with the project's .venv by its path: another activated virtualenv would only make IPython warn
# in every notebook run and doc build.
unexport VIRTUAL_ENV
BIN := $(VENV)/bin
PY := $(BIN)/python
NBDEV_WORKERS ?= 2
MAKE_START := $(shell date +%s)
PYTEST_WORKERS ?= 2
# The tests compile hundreds of small programs and run most of them for moments: they run with XLA's quick compilation
# (unoptimised code, and the older loop emitter for fused element-wise code instead of its fusion emitters: a small
# language model's training compiles in a quarter of the default time) and one compilation cache shared by all their
# processes, which compile many of the same programs (_proc/jax_cache). The pages that mostly run large programs (whole
# photos) keep XLA's defaults (tools.nbtest --optimised): page 14 took 40 CPU s against 69 with quick compilation,
# page 02's whole-photo cells 6 to 28 s each against 83 to 95, page 26 (dynamic evaluation: the same step of a
# trained model, thousands of times) 115 CPU s against 166, and page 34's et-train run (300 training steps in a command
# the page starts) 60 s against 133 alone, and past nbtest's 600-second cell limit beside three other pages with quick
# compilation. Benchmarks and training use neither.
QUICK = XLA_FLAGS="--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false $$XLA_FLAGS" \
        JAX_COMPILATION_CACHE_DIR=$(CURDIR)/_proc/jax_cache JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0
OPTIMISED = 02_image_inpainting.ipynb,14_inpaint.ipynb,26_dynamic.ipynb,34_howto_own_images.ipynb,36_inpainting_results.ipynb
NBTEST = $(QUICK) $(PY) -m tools.nbtest --n-workers $(NBDEV_WORKERS) --optimised $(OPTIMISED)
# pytest-xdist spreads the test files over the cores, each file whole on one worker, so that a module-scoped fixture
# (the README's runs, the rendered tiny site) is made once. (Its `loadgroup` cannot group tests under pytest 9: it
# renames a test through an attribute pytest 9 no longer reads.)
PYTEST = $(QUICK) $(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadfile --durations=25 -m "not slow" tests/

.PHONY: setup export site serve test lint sync nbtest pytest test-slow browser-test lab bench clean shrink outputs

## Debian packages, .venv and the package with its dev extras (idempotent, fast when nothing changed).
setup:
	@bash tools/setup.sh

## Write energy_transformer/ from the notebooks' `#| export` cells.
export: setup
	$(BIN)/nbdev-export

## Render the tutorial site into _docs/ (Quarto when installed, pandoc otherwise) with its API page and
## search index, and write README.md.
site: export
	$(PY) -m tools.build_site

serve: site
	$(PY) -m http.server --bind 127.0.0.1 --directory _docs 8000

## The test command: package in sync with the notebooks, ruff, then every notebook as tests and pytest side by side
## (neither leaves a core idle while the other finishes its last, longest job): the notebooks' lines as they finish,
## then pytest's report, then the time of each and of the whole command.
test: setup sync lint
	@mkdir -p _proc; start=$$SECONDS; \
	$(PYTEST) > _proc/pytest.log 2>&1 & pytest=$$!; trap 'kill $$pytest 2>/dev/null' EXIT; \
	$(NBTEST); nb=$$?; nb_s=$$((SECONDS - start)); wait $$pytest; py=$$?; \
	echo "----- pytest, run beside the notebooks:"; cat _proc/pytest.log; \
	ok() { [ $$1 = 0 ] && echo passed || echo FAILED; }; report=$$(tail -1 _proc/pytest.log | sed -E 's/^=+ | =+$$//g'); \
	echo "make test: notebooks $$(ok $$nb) in $$nb_s s, pytest $$(ok $$py) ($$report); both in $$((SECONDS - start)) s," \
	     "$$(( $$(date +%s) - $(MAKE_START) )) s in all, set-up, sync and lint included"; \
	[ $$nb = 0 ] && [ $$py = 0 ]

## The package is what the notebooks export, and the notebooks are clean (checked on a copy).
sync: setup
	$(PY) -m tools.check_sync

## Every notebook as tests (nbdev's test runner, the same cells as `nbdev-test`), a line per notebook as it finishes;
## a failure names the notebook and the cell (`Cell #n`, counted from 1).
nbtest: setup
	$(NBTEST)

## pytest on $(PYTEST_WORKERS) workers, naming the 25 slowest tests at the end (where the time goes).
pytest: setup
	$(PYTEST)

## ruff (rule sets E, F, I, B, UP; configured in pyproject.toml).
lint: setup
	$(BIN)/ruff check energy_transformer tests benchmarks tools

## Re-run notebooks and save their outputs (`make outputs NB="nbs/02_image_inpainting.ipynb ..."`; `#| slow` cells
## keep theirs), then clean them and shrink their figures.
outputs: setup
	$(PY) -m tools.run_notebooks $(NB)

## Re-encode the notebooks' PNG figures as palette PNGs where smaller (after re-running notebooks with --save).
shrink: setup
	$(PY) -m tools.shrink_figures

## Also run the cells marked `#| slow` (large sweeps, timings, whole tables). They run only when ET_SLOW=1, in Jupyter
## too; the cells that retrain the shipped models (hours) need ET_RETRAIN=1 instead, and the shipped checkpoints and
## quality tables are rewritten only when ET_WRITE_SHIPPED=1 as well.
test-slow: setup sync
	ET_SLOW=1 $(PY) -m tools.nbtest --n-workers 1 --flags slow
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadfile -m slow tests/

## Load every page of the built site in headless Chromium (links and anchors, math, 390 px width, search);
## screenshots in screenshots/ (not published).
browser-test: site
	$(PY) -m tools.browser_test

lab: setup
	$(BIN)/jupyter lab nbs/

bench: setup
	$(PY) -m benchmarks.variants
	$(PY) -m benchmarks.run

clean:
	rm -rf _docs _proc
