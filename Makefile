# Set-up is part of every target: the first run builds .venv and installs Arena into it.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[all]"
	$(BIN)/python -c "import torch; assert torch.__version__.startswith('2.13.0'), torch.__version__"
	@# The page tests drive Debian's chromium; install it where we may (root with apt-get), else they say why they skip.
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then 		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then 			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; 		else echo "note: chromium/chromedriver missing and not root: the browser tests will be skipped"; fi; 	fi
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/arena run-tournament --game connect_four --agents random,greedy,center,minimax:depth=2,mcts:simulations=200 \
		--rounds 4 --seed 1 --name demo-$$(date +%s) --quiet
	$(BIN)/arena leaderboard

test: $(STAMP)
	@# Where Python is told not to write bytecode (PYTHONDONTWRITEBYTECODE, as on the CI machine), each of the ~650 arena
	@# processes the suite starts compiled Arena's modules from source again, ~0.3 s a start: compile them here, once
	@# (later runs compile only what changed).
	$(BIN)/python -m compileall -q arena db agents games plugins tests/fixtures/plugins
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
