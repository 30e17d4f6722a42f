# mk/hosts.mk — gpuagg from its host languages (tests/hosts/).
#
#   make test-hosts     Python (standard sqlite3 module), sqlite-utils and
#                       pandas (tests/hosts/test_analysts.py), the sqlite3 CLI,
#                       make install into a temporary DESTDIR, and Node.js
#                       (better-sqlite3 12.x, npm-installed into
#                       tests/hosts/node/node_modules on first use: needs the
#                       npm registry, and a build from source takes minutes),
#                       then the npm package: `make npm` and its tarball
#                       installed next to that better-sqlite3 in a temporary
#                       folder (tests/hosts/test_npm.sh)
#   make examples       runs examples/ against ./libgpuagg
#
# `make test` runs the same suites (tests/run_all.sh) but never runs npm: its
# node suite prints SKIP until `make test-hosts` has installed better-sqlite3
# (the npm package is tested here only; the wheel is tested by `make test`).
# Each suite prints RESULT lines; a missing interpreter gives SKIP, not FAIL.
.PHONY: test-hosts examples

HOSTS_ENV = GPUAGG_LIB=$(abspath $(basename $(LIB))) PYTHON=$(PYTHON) SQLITE3=$(SQLITE3)

test-hosts: $(LIB)
	@if command -v $(NPM) >/dev/null 2>&1; then $(MAKE) --no-print-directory -s npm; fi
	@$(HOSTS_ENV) GPUAGG_NPM_TGZ=$(CURDIR)/$(NPM_TGZ) sh -c 'rc=0; \
	  $(PYTHON) tests/hosts/test_python.py || rc=1; \
	  $(PYTHON) tests/hosts/test_analysts.py || rc=1; \
	  tests/hosts/test_cli.sh || rc=1; \
	  tests/hosts/test_install.sh || rc=1; \
	  tests/hosts/node/run.sh --install || rc=1; \
	  tests/hosts/test_npm.sh || rc=1; exit $$rc'

examples: $(LIB)
	$(PYTHON) examples/python_example.py $(abspath $(basename $(LIB)))
	$(SQLITE3) < examples/cli_example.sql
	@if [ -d tests/hosts/node/node_modules/better-sqlite3 ]; then \
	  NODE_PATH=$(CURDIR)/tests/hosts/node/node_modules node examples/node_example.js $(abspath $(basename $(LIB))); \
	else echo "SKIP: examples/node_example.js needs better-sqlite3 (make test-hosts installs it)"; fi
