# Set-up is part of every target: the first run builds .venv and installs Arena into it.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,report,rl]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/arena run-tournament --game connect_four --agents random,greedy,center,minimax:depth=2,mcts:simulations=200 \
		--rounds 4 --seed 1 --name demo-$$(date +%s) --quiet
	$(BIN)/arena leaderboard

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 -p no:cacheprovider

# Benchmarks compare against OpenSpiel and PettingZoo, installed in a separate environment.
BENCH_VENV ?= .venv-bench
bench: $(STAMP)
	test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet open-spiel pettingzoo pygame numpy -e ".[report]"
	$(BENCH_VENV)/bin/python bench/engines.py
	$(BENCH_VENV)/bin/python bench/search.py
	$(BIN)/python bench/tournament.py
	$(BIN)/python bench/ratings.py
	$(BIN)/python bench/report.py

clean:
	rm -rf $(VENV) $(BENCH_VENV) arena.db arena.db-wal arena.db-shm
