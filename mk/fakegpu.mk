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

FAKE_HDRS := $(ALL_HDRS)

# One object per source (a change rebuilds one file: the mutation runner
# builds dozens of trees that differ from a built one in one file).  Its own
# pattern: its stem is shorter than $(BUILD)/%.o's, so make prefers it.
FAKE_OBJ := $(patsubst %.c,$(FAKE_DIR)/obj/%.o,$(FAKE_SRC))
$(FAKE_DIR)/obj/%.o: %.c $(FAKE_HDRS) $(STAMP)/host.stamp
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -fPIC -fvisibility=hidden -Wall -Wextra -D_GNU_SOURCE \
	  $(GA_INC) $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE)) $(SANFLAGS) -c -o $@ $<

$(FAKE_LIB): $(FAKE_OBJ)
	$(CC) -shared -Wl,-z,defs -Wl,-z,nodelete -o $@ $(FAKE_OBJ) $(SANFLAGS) -lpthread -lm

.PHONY: fake-lib
fake-lib: $(FAKE_LIB)

# tests/fakegpu/test_restore.c: the extension linked in (SQLITE_CORE)
FAKE_RESTORE := $(FAKE_DIR)/test_restore
FAKE_CORE_OBJ := $(patsubst %.c,$(FAKE_DIR)/core/%.o,tests/fakegpu/test_restore.c $(FAKE_SRC))
$(FAKE_DIR)/core/%.o: %.c $(FAKE_HDRS) $(wildcard tests/harden/*.h) $(STAMP)/host.stamp
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 -g -Wall -Wextra -D_GNU_SOURCE -DSQLITE_CORE $(GA_INC) \
	  -Itests/harden $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE)) $(SANFLAGS) -c -o $@ $<
$(FAKE_RESTORE): $(FAKE_CORE_OBJ)
	$(CC) -o $@ $(FAKE_CORE_OBJ) $(SANFLAGS) $(SQLITE_LIBS) -lpthread -lm -ldl
fake-lib: $(FAKE_RESTORE)
