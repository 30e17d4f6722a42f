# mk/state.mk — C unit tests of the exact aggregate states (engine/state/state.c):
# engine/*.c built with SQLITE_CORE (linked to libsqlite3, no GPU), like
# mk/engine_test.mk.
STATE_TEST := $(BUILD)/tests/test_state_engine
STATE_TEST_SRC := tests/test_state_engine.c $(filter-out engine/matadd/%,$(ENGINE_SRC)) kernels/none.c
# the extension and engine as one program, no CUDA (as tests/harden/ links them)
STATE_LINK_SRC := $(EXT_SRC) $(ENGINE_SRC) kernels/none.c

$(STATE_TEST): $(STATE_TEST_SRC) $(ALL_HDRS) $(STAMP)/host.stamp
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -D_GNU_SOURCE -DSQLITE_CORE $(SANFLAGS) \
	  $(GA_INC) $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE)) -o $@ $(STATE_TEST_SRC) \
	  $(SANFLAGS) $(SQLITE_LIBS) -lpthread -lm

.PHONY: test-state-engine
test-state-engine: $(STATE_TEST)
	$(STATE_TEST)

# bench/state_rows.sh: the per-row cost of the fused worker aggregate
# (callgrind instructions and wall time), in bench/results/state_rows_*.csv.
# state_rows_buf is the measured alternative (GA_FUSED_BUFFER).
STATE_BENCH_CC = $(CC) -std=c11 -O2 -g -flto=auto -D_GNU_SOURCE -DSQLITE_CORE $(GA_INC) \
                 -Ibench $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE))
STATE_BENCH_DEPS = bench/state_rows.c $(STATE_LINK_SRC) $(ALL_HDRS) $(STAMP)/host.stamp
$(BUILD)/bench/state_rows: $(STATE_BENCH_DEPS)
	@mkdir -p $(dir $@)
	$(STATE_BENCH_CC) -o $@ bench/state_rows.c $(STATE_LINK_SRC) $(SQLITE_LIBS) -lpthread -lm -ldl
$(BUILD)/bench/state_rows_buf: $(STATE_BENCH_DEPS)
	@mkdir -p $(dir $@)
	$(STATE_BENCH_CC) -DGA_FUSED_BUFFER -o $@ bench/state_rows.c $(STATE_LINK_SRC) $(SQLITE_LIBS) -lpthread -lm -ldl

.PHONY: bench-state
bench-state: $(BUILD)/bench/state_rows $(BUILD)/bench/state_rows_buf
	BENCH_BUILD=$(BUILD) bench/state_rows.sh

# tests/test_state_worker.c: gpuagg_partial at the SQL level, linked with the
# extension's objects (SQLITE_CORE) like tests/harden/.
STATE_WORKER := $(BUILD)/tests/test_state_worker
$(STATE_WORKER): tests/test_state_worker.c $(STATE_LINK_SRC) $(ALL_HDRS) $(STAMP)/host.stamp
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 -g -Wall -Wextra -D_GNU_SOURCE -DSQLITE_CORE $(SANFLAGS) $(GA_INC) \
	  $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE)) -o $@ tests/test_state_worker.c $(STATE_LINK_SRC) \
	  $(SQLITE_LIBS) -lpthread -lm -ldl

.PHONY: test-state-worker
test-state-worker: $(STATE_WORKER)
	$(STATE_WORKER)
