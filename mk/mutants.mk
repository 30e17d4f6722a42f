# mk/mutants.mk — mutation testing (tests/mutants/run.py, list in
# tests/mutants/mutants.txt): each deliberate bug is applied to a scratch
# copy of the tree, built with CUDA=0 and run against the suites; the target
# fails if any mutant survives or a snippet is stale.
#   make test-mutants      every mutant (local: 8-12 minutes on 2 cores)
#   make test-mutants-ci   the `ci: yes` subset (what .ci/run runs)
#   make test-mutants MUTANTS="name ..."   only these
.PHONY: test-mutants test-mutants-ci

test-mutants:
	PYTHON=$(PYTHON) SQLITE3=$(SQLITE3) $(PYTHON) tests/mutants/run.py $(MUTANTS)

test-mutants-ci:
	PYTHON=$(PYTHON) SQLITE3=$(SQLITE3) $(PYTHON) tests/mutants/run.py --ci --no-baseline
