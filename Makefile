# `make demo`: set up and run a short self-play training that ends with an evaluation table.
# `make test`: set up and run the test suite.
# `make pretrained`: retrain the policies shipped in agents/pretrained/ (PRESET:PLAYERS:MINUTES each).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
TORCH ?= torch==2.13.0

.PHONY: setup demo test bench lint clean pretrained

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PY) -c "import torch" 2>/dev/null || $(PIP) install -q "$(TORCH)"
	$(PIP) install -q -e ".[train,dev]"
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(VENV)/bin/thirtyone train --preset scat --players 2 --minutes 3 --out runs/demo-$$(date +%Y%m%d-%H%M%S)

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
