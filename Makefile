# `make demo`: set up and run a short self-play training that ends with an evaluation table.
# `make test`: set up and run the test suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
TORCH ?= torch==2.13.0

.PHONY: setup demo test bench lint clean

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

bench: setup
	$(PY) benchmarks/throughput.py

lint: setup
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) build *.egg-info
