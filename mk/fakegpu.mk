# mk/fakegpu.mk — the extension built on the fake GPU backend (tests only).
#
#   make fake-lib      build/fake/libgpuagg.so: ext/ + engine/ linked with
#                      tests/fakegpu/fakegpu.c instead of the CUDA kernels
#
# `make test` builds it and runs the GPU suites against it (tests/run_all.sh,
# GPUAGG_FAKE_LIB): CI has no GPU, and this is how it runs the engine's
# GPU-path logic (submit, device partials, fallbacks, several devices).  It
# needs no CUDA headers or nvcc, and it is never installed or shipped.
FAKE_DIR := $(BUILD)/fake
FAKE_LIB := $(FAKE_DIR)/libgpuagg.so
FAKE_SRC := $(EXT_SRC) $(ENGINE_SRC) tests/fakegpu/fakegpu.c

$(FAKE_LIB): $(FAKE_SRC) $(wildcard engine/*.h ext/*.h kernels/*.h) $(STAMP)/host.stamp
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -fPIC -fvisibility=hidden -Wall -Wextra -D_GNU_SOURCE \
	  -Iengine -Ikernels -Iext $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE)) $(SANFLAGS) \
	  -shared -Wl,-z,defs -Wl,-z,nodelete -o $@ $(FAKE_SRC) $(SANFLAGS) -lpthread -lm

.PHONY: fake-lib
fake-lib: $(FAKE_LIB)

# tests/fakegpu/test_restore.c: the extension linked in (SQLITE_CORE)
FAKE_RESTORE := $(FAKE_DIR)/test_restore
$(FAKE_RESTORE): tests/fakegpu/test_restore.c $(FAKE_SRC) $(wildcard engine/*.h ext/*.h kernels/*.h) $(STAMP)/host.stamp
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 -g -Wall -Wextra -D_GNU_SOURCE -DSQLITE_CORE -Iengine -Ikernels -Iext \
	  -Itests/harden $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE)) $(SANFLAGS) -o $@ $< $(FAKE_SRC) \
	  $(SANFLAGS) $(SQLITE_LIBS) -lpthread -lm -ldl
fake-lib: $(FAKE_RESTORE)
