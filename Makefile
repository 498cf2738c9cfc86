# `make demo`: set up and run a short training that shows learning and ends with a before/after table.
# `make setup`: a virtual environment with the project, its numba kernels compiled (`thirtyone warmup`).
# `make test`: set up and run the test suite.
# `make pretrained`: retrain the policies shipped in agents/pretrained/ (PRESET:PLAYERS:MINUTES each).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
TORCH ?= torch==2.13.0
# compile the numba kernels during setup, in 2 processes (WARMUP=0: each first use compiles its own)
WARMUP ?= 1

.PHONY: setup demo test bench lint clean pretrained

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PY) -c "import torch" 2>/dev/null || $(PIP) install -q "$(TORCH)"
	$(PIP) install -q -e ".[train,dev]"
	if [ "$(WARMUP)" != 0 ]; then $(VENV)/bin/thirtyone warmup; fi
	touch $@

setup: $(VENV)/.installed

# the demo: a plain network (no heuristic inside, no imitation) learns from scratch against RandomAgent and
# GreedyAgent for 3 minutes, evaluated every 20 s; the final table compares the starting and the trained
# policy on the same matches
demo: setup
	$(VENV)/bin/thirtyone train --preset scat --players 2 --minutes 3 --advice false --bc-decisions 0 \
	  --rule-based random,greedy --eval-every-minutes 0.33 --eval-matches 400 --final-matches 1000 \
	  --out runs/demo-$$(date +%Y%m%d-%H%M%S)

test: setup
	$(PY) -m pytest -n 2 tests

PRETRAINED ?= scat:2:15 scat:3:15 scat:4:15 swedish:2:10 swedish-chips:2:10 italian:2:10 russian:2:10 \
  swedish:3:5 swedish-chips:3:5 italian:3:5 russian:3:5 swedish:4:5 swedish-chips:4:5 italian:4:5 russian:4:5 \
  scat:5:5 scat:6:5

pretrained: setup
	@for spec in $(PRETRAINED); do \
	  set -- $$(echo $$spec | tr ':' ' '); \
	  out=runs/pretrain_$$1_$$2p-$$(date +%Y%m%d-%H%M%S); \
	  $(VENV)/bin/thirtyone train --preset $$1 --players $$2 --minutes $$3 --out $$out --final-matches 2000 || exit 1; \
	  $(PY) -c "from agents.policy import export_policy; export_policy('$$out/last.pt', 'agents/pretrained/$$1_$$2p.safetensors')" || exit 1; \
	done

bench: setup
	$(PY) benchmarks/throughput.py

lint: setup
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) build *.egg-info
