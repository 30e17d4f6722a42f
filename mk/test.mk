# mk/test.mk — the test suite (tests/run_all.sh; tests/README.md).
#   make test       every suite; GPU-only checks print SKIP without GPUAGG_TEST_GPU,
#                   and run against the fake-GPU build instead; builds the
#                   wheel first (mk/wheel.mk) for tests/hosts/test_wheel.sh
#   make test-gpu   the same, with every SQL suite forced onto a GPU that must
#                   be usable (GPUAGG_TEST_GPU=1), plus the GPU-only checks
.PHONY: test test-gpu

TEST_ENV = GPUAGG_LIB=$(CURDIR)/libgpuagg PYTHON=$(PYTHON) SQLITE3=$(SQLITE3)

# make test also runs the GPU suites against the fake-GPU build (mk/fakegpu.mk)
test: $(LIB) $(FAKE_LIB) $(FAKE_RESTORE) $(WHEEL)
	$(TEST_ENV) GPUAGG_FAKE_LIB=$(CURDIR)/$(basename $(FAKE_LIB)) \
	  GPUAGG_FAKE_RESTORE=$(CURDIR)/$(FAKE_RESTORE) GPUAGG_WHEEL=$(CURDIR)/$(WHEEL) tests/run_all.sh

test-gpu: $(LIB)
	$(TEST_ENV) GPUAGG_TEST_GPU=1 tests/run_all.sh
