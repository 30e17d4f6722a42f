# mk/harden.mk — sanitizers, valgrind, allocation-failure injection, threads,
# fuzzing (tests/harden/README.md).
#
#   make test-asan       the whole suite (tests/run_all.sh) against an
#                        ASan+UBSan build of the extension, plus test_engine
#                        and the C harnesses under ASan+UBSan
#   make test-valgrind   test_engine and the C harnesses under memcheck
#   make test-oom        tests/harden/oom.c: fail the Nth sqlite3_malloc, N=1..
#   make test-tsan       tests/harden/threads.c, aggregate_threads.c (the
#                        workers of gpu_aggregate) and cache_threads.c
#                        (gpu_cache, host and fake GPU) under ThreadSanitizer
#   make fuzz            libFuzzer campaign of FUZZ_SECONDS (60) seconds
#   make fuzz-partials   partial and state BLOBs mutated for
#                        FUZZ_PARTIALS_SECONDS (60) seconds, through the
#                        ASan+UBSan extension, UBSan recoverable
#                        (tests/harden/fuzz_partials.py)
#   make test-harden-ci  what CI runs: asan suite (less three suites), oom,
#                        tsan, short fuzz (tests/harden/ci.sh)
#   make harden-build    the sanitizer binaries only (make -j)
#
# Sanitizer builds are CPU-only (CUDA=0): ASan/TSan/valgrind do not see into
# the GPU, and the GPU path falls back to the same host code.  Each flavour
# builds in its own directory (build/asan, build/tsan, build/vg, build/fuzz),
# never touching build/ or ./libgpuagg.so.

HARDEN_DIR   := tests/harden
HARDEN_SRC   := $(EXT_SRC) $(ENGINE_SRC) kernels/none.c
HARDEN_HDRS  := $(ALL_HDRS) $(wildcard $(HARDEN_DIR)/*.h)
HARDEN_CC    := $(CC) -std=c11 -g -Wall -Wextra -D_GNU_SOURCE -DSQLITE_CORE \
                $(GA_INC) $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE))
HARDEN_LIBS  := $(SQLITE_LIBS) -lpthread -lm -ldl

# UBSan recoverable: ASAN_ENV's halt_on_error=1 still stops every run at
# the first report; fuzz-partials logs each one and goes on (issue 36)
ASAN_FLAGS   ?= -fsanitize=address,undefined -fsanitize-recover=undefined -fno-omit-frame-pointer
TSAN_FLAGS   ?= -fsanitize=thread
LIBASAN      := $(shell $(CC) -print-file-name=libasan.so)
ASAN_ENV      = ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=1 \
                LSAN_OPTIONS=suppressions=$(CURDIR)/$(HARDEN_DIR)/lsan.supp:print_suppressions=0 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
VALGRIND     ?= valgrind
VG            = $(VALGRIND) -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect,possible \
                --show-leak-kinds=definite,indirect,possible
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1

ASAN_BUILD := build/asan
TSAN_BUILD := build/tsan
VG_BUILD   := build/vg
FUZZ_BUILD := build/fuzz

.PHONY: test-asan test-valgrind test-oom test-tsan fuzz fuzz-build test-harden-ci harden-tools \
        harden-build

# Suites that test-asan leaves out (tests/harden/ci.sh sets some: CI's time).
# dask: Python processes of a Dask cluster around gpuagg's SQL, whose
# interpreters hold allocations at exit that LeakSanitizer reports (no
# allocator frame of CPython to suppress them by); the C it reaches runs
# under ASan in query_errors (damaged partials) and query_partial.
ASAN_SKIP_SUITES ?= dask
# the differential generator with the cache on, under ASan: fewer queries
# than make test's 1,000 (400 on the fake GPU): the same code, 4x slower
# (300: CI took 20.1 min at cbe0d5b with 500 here)
ASAN_QUERY_CACHE_QUERIES ?= 200
# and gpu_query's own differential (make test: 5,200): under ASan it took
# 675 s of CI's 28 minutes at 8893fc1, 169 s at 1,200 (93c216d), 87 s at
# 700 (b2402aa, CI 22 min), 500, 350; 250 since the fifth session (query_join
# reads it too: 57 s at 350)
ASAN_QUERY_QUERIES ?= 250
# gpu_query over shard files (make test: 600; 48 s at 250, 48 s at 100 in
# the fifth session, with the medians' partials)
ASAN_QUERY_PARTIAL_QUERIES ?= 60
# test_var's random cases (make test: 700; 42 s under ASan at 700, 2026-12-06:
# CI's 20 minutes took these four down)
ASAN_VAR_CASES ?= 250
# test_cache's compact sums (section csum, make test: 1, 2 and 3 threads):
# 3 alone under ASan (72 s for the three, 2026-12-06, seventh session)
ASAN_CSUM_THREADS ?= 3

# ---- the extension and test_engine with ASan+UBSan (main Makefile rules) ----
ASAN_SUBMAKE = CFLAGS='-O1 -g' $(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) LIB=$(ASAN_BUILD)/libgpuagg.so \
               SANFLAGS='$(ASAN_FLAGS)' CUDA=0 LTO= HARDEN= HARDEN_LD=

# (a phony wrapper: the sub-make builds the file with the Makefile's own rule)
.PHONY: asan-lib
asan-lib:
	+@$(ASAN_SUBMAKE) $(ASAN_BUILD)/libgpuagg.so

# ---- C harnesses: the extension linked in (SQLITE_CORE), one per flavour ----
# Each flavour compiles the extension's sources once, into $(1)/hobj/ (its
# pattern's stem is shorter than $(BUILD)/%.o's, so make prefers it), and
# links them into each of its harnesses.  $(1) build dir, $(2) flags
hobj = $(patsubst %.c,$(1)/hobj/%.o,$(2))
define harden_prog
.PRECIOUS: $(1)/hobj/%.o
$(1)/hobj/%.o: %.c $(HARDEN_HDRS)
	@mkdir -p $$(dir $$@)
	$(HARDEN_CC) $(2) -c -o $$@ $$<
$(1)/harden/%: $(HARDEN_DIR)/%.c $(call hobj,$(1),$(HARDEN_SRC)) $(HARDEN_HDRS)
	@mkdir -p $$(dir $$@)
	$(HARDEN_CC) $(2) -o $$@ $$< $(call hobj,$(1),$(HARDEN_SRC)) $(HARDEN_LIBS)
endef
$(eval $(call harden_prog,$(ASAN_BUILD),-O1 $(ASAN_FLAGS)))
$(eval $(call harden_prog,$(TSAN_BUILD),-O1 $(TSAN_FLAGS)))
$(eval $(call harden_prog,$(VG_BUILD),-O1))

HARDEN_PROGS := oom threads surface aggregate_threads cache_threads

test-asan: asan-lib $(addprefix $(ASAN_BUILD)/harden/,$(HARDEN_PROGS))
	+@$(ASAN_SUBMAKE) $(ASAN_BUILD)/tests/test_engine $(ASAN_BUILD)/fake/libgpuagg.so $(ASAN_BUILD)/fake/test_restore
	$(ASAN_ENV) $(ASAN_BUILD)/tests/test_engine
	$(ASAN_ENV) $(ASAN_BUILD)/harden/surface
	$(ASAN_ENV) $(ASAN_BUILD)/harden/threads
	$(ASAN_ENV) $(ASAN_BUILD)/harden/aggregate_threads
	$(ASAN_ENV) $(ASAN_BUILD)/harden/cache_threads
	@rm -rf $(ASAN_BUILD)/bin && mkdir -p $(ASAN_BUILD)/bin
	@if command -v node >/dev/null 2>&1; then ln -s $(CURDIR)/$(HARDEN_DIR)/asan-node.sh $(ASAN_BUILD)/bin/node; fi
	$(ASAN_ENV) GPUAGG_LIB=$(CURDIR)/$(ASAN_BUILD)/libgpuagg GPUAGG_FAKE_LIB=$(CURDIR)/$(ASAN_BUILD)/fake/libgpuagg \
	  GPUAGG_FAKE_RESTORE=$(CURDIR)/$(ASAN_BUILD)/fake/test_restore \
	  PYTHON=$(CURDIR)/$(HARDEN_DIR)/asan-run.sh SQLITE3=$(CURDIR)/$(HARDEN_DIR)/asan-sqlite3.sh \
	  HARDEN_PYTHON=$(PYTHON) HARDEN_SQLITE3=$(shell command -v $(SQLITE3)) HARDEN_LIBASAN=$(LIBASAN) \
	  HARDEN_NODE=$(shell command -v node) PATH=$(CURDIR)/$(ASAN_BUILD)/bin:$$PATH \
	  QUERY_CACHE_QUERIES=$(ASAN_QUERY_CACHE_QUERIES) QUERIES=$(ASAN_QUERY_QUERIES) \
	  QUERY_PARTIAL_QUERIES=$(ASAN_QUERY_PARTIAL_QUERIES) CASES=$(ASAN_VAR_CASES) \
	  CACHE_CSUM_THREADS='$(ASAN_CSUM_THREADS)' SKIP_SUITES='$(ASAN_SKIP_SUITES)' tests/run_all.sh

# Every sanitizer binary of test-asan, test-oom and test-tsan, built and not
# run (make -j harden-build: CI builds them on both cores first, then runs
# the checks in two lanes that find them built)
TSAN_PROGS := threads threads_fake aggregate_threads cache_threads cache_threads_fake
harden-build: asan-lib $(addprefix $(ASAN_BUILD)/harden/,$(HARDEN_PROGS)) \
              $(addprefix $(TSAN_BUILD)/harden/,$(TSAN_PROGS))
	+@$(ASAN_SUBMAKE) $(ASAN_BUILD)/tests/test_engine $(ASAN_BUILD)/fake/libgpuagg.so $(ASAN_BUILD)/fake/test_restore

test-oom: $(ASAN_BUILD)/harden/oom
	@# the process's cache not kept past each run's last close: the sweep
	@# compares the memory before the open with the memory after the close
	$(ASAN_ENV) GPUAGG_CACHE_KEEP=off $(ASAN_BUILD)/harden/oom

# The same threads on the fake GPU backend (tests/fakegpu/): every aggregate
# takes the GPU path, whose stream worker threads TSan watches too.
TSAN_FAKE_OBJ = $(call hobj,$(TSAN_BUILD),$(EXT_SRC) $(ENGINE_SRC) tests/fakegpu/fakegpu.c)
$(TSAN_BUILD)/harden/threads_fake: $(HARDEN_DIR)/threads.c $(TSAN_FAKE_OBJ) $(HARDEN_HDRS)
	@mkdir -p $(dir $@)
	$(HARDEN_CC) -O1 $(TSAN_FLAGS) -o $@ $< $(TSAN_FAKE_OBJ) $(HARDEN_LIBS)

# gpu_cache's threads on the fake GPU backend: loads streamed to the device
# from the workers, queries on the device (tests/harden/cache_threads.c)
$(TSAN_BUILD)/harden/cache_threads_fake: $(HARDEN_DIR)/cache_threads.c $(TSAN_FAKE_OBJ) $(HARDEN_HDRS)
	@mkdir -p $(dir $@)
	$(HARDEN_CC) -O1 $(TSAN_FLAGS) -o $@ $< $(TSAN_FAKE_OBJ) $(HARDEN_LIBS)

test-tsan: $(addprefix $(TSAN_BUILD)/harden/,$(TSAN_PROGS))
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 $(TSAN_BUILD)/harden/threads
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 HARDEN_GPU=1 HARDEN_ITERS=8 \
	  GPUAGG_FAKE_DELAY_US=50 $(TSAN_BUILD)/harden/threads_fake
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 $(TSAN_BUILD)/harden/aggregate_threads
	@# the grouped scans again with the workers' hash tables full at 2 groups:
	@# every grouped call moves groups mid-piece, and its workers go direct
	@# (rows into the shared groups under the shard locks)
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 GPUAGG_SCAN_LOCAL_GROUPS=2 \
	  $(TSAN_BUILD)/harden/aggregate_threads
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 $(TSAN_BUILD)/harden/cache_threads
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 HARDEN_GPU=1 HARDEN_ITERS=12 \
	  GPUAGG_FAKE_DELAY_US=20 $(TSAN_BUILD)/harden/cache_threads_fake

VG_SUBMAKE = $(MAKE) --no-print-directory BUILD=$(VG_BUILD) LIB=$(VG_BUILD)/libgpuagg.so CUDA=0 LTO= SANFLAGS=

test-valgrind: $(addprefix $(VG_BUILD)/harden/,$(HARDEN_PROGS))
	+@$(VG_SUBMAKE) $(VG_BUILD)/tests/test_engine
	$(VG) $(VG_BUILD)/tests/test_engine
	$(VG) $(VG_BUILD)/harden/surface
	HARDEN_QUICK=1 $(VG) $(VG_BUILD)/harden/threads
	HARDEN_QUICK=1 $(VG) $(VG_BUILD)/harden/aggregate_threads
	HARDEN_QUICK=1 $(VG) $(VG_BUILD)/harden/cache_threads
	GPUAGG_CACHE_KEEP=off HARDEN_QUICK=1 $(VG) $(VG_BUILD)/harden/oom

# ---- libFuzzer ----
FUZZ_BIN := $(FUZZ_BUILD)/gpuagg_fuzz
$(FUZZ_BIN): $(HARDEN_DIR)/fuzz.c $(HARDEN_SRC) $(HARDEN_HDRS)
	@$(HARDEN_DIR)/need-libfuzzer.sh $(FUZZ_CC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 -Wall -Wextra -D_GNU_SOURCE -DSQLITE_CORE $(GA_INC) \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
	  -o $@ $< $(HARDEN_SRC) $(HARDEN_LIBS)

fuzz-build: $(FUZZ_BIN)

fuzz: $(FUZZ_BIN)
	@mkdir -p $(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/artifacts
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	$(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) -max_len=512 -len_control=0 -timeout=20 -rss_limit_mb=4096 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/artifacts/ \
	  $(if $(filter-out 1,$(FUZZ_JOBS)),-jobs=$(FUZZ_JOBS) -workers=$(FUZZ_JOBS)) \
	  $(FUZZ_BUILD)/corpus $(HARDEN_DIR)/corpus

# ---- partial and state BLOBs (issue 36): tests/harden/fuzz_partials.py ----
# The ASan+UBSan extension in the suite's python (asan-run.sh); the
# process's stderr goes to $(FUZZ_PARTIALS_DIR)/stderr.log: a UBSan report
# there and the run goes on (the case that made it is kept), failing at its
# end; an ASan error aborts it with the case in
# $(FUZZ_PARTIALS_DIR)/case.bin (the log is printed).  FUZZ_PARTIALS_SEED
# repeats a run (its seed is printed).
FUZZ_PARTIALS_SECONDS ?= 60
FUZZ_PARTIALS_SEED    ?=
FUZZ_PARTIALS_DIR     := build/fuzz-partials
.PHONY: fuzz-partials
fuzz-partials: asan-lib
	@rm -rf $(FUZZ_PARTIALS_DIR) && mkdir -p $(FUZZ_PARTIALS_DIR)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/$(HARDEN_DIR)/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=0 \
	  HARDEN_PYTHON=$(PYTHON) HARDEN_LIBASAN=$(LIBASAN) GPUAGG_LIB=$(CURDIR)/$(ASAN_BUILD)/libgpuagg \
	  $(HARDEN_DIR)/asan-run.sh $(HARDEN_DIR)/fuzz_partials.py --seconds $(FUZZ_PARTIALS_SECONDS) \
	  --out $(FUZZ_PARTIALS_DIR) $(if $(FUZZ_PARTIALS_SEED),--seed $(FUZZ_PARTIALS_SEED)) \
	  || { tail -c 20000 $(FUZZ_PARTIALS_DIR)/stderr.log; exit 1; }

# ---- all of them: the whole suite under ASan, TSan, every allocation failed
# in turn, and the fuzzer for FUZZ_SECONDS (valgrind apart: test-valgrind)
.PHONY: test-harden
test-harden: test-asan test-tsan test-oom fuzz

# ---- CI: the cheap ones ----
# HARDEN_PARTS: some of asan oom tsan fuzz (default all; .ci/run's lanes)
test-harden-ci:
	@$(HARDEN_DIR)/ci.sh $(HARDEN_PARTS)

# ---- threads on the GPU (GPU machine): the same harness built with CUDA ----
THREADS_GPU := $(BUILD)/harden/threads_gpu
.PHONY: test-threads-gpu
ifeq ($(CUDA),1)
$(THREADS_GPU): $(HARDEN_DIR)/threads.c $(EXT_SRC) $(ENGINE_SRC) $(HARDEN_HDRS) $(CU_OBJ) $(DLINK)
	@mkdir -p $(dir $@)
	$(HARDEN_CC) -O2 -DGPUAGG_CUDA=1 -I$(CUDA_HOME)/include -o $@ $(HARDEN_DIR)/threads.c \
	  $(EXT_SRC) $(ENGINE_SRC) $(CU_OBJ) $(DLINK) $(CUDA_LIBS) $(SQLITE_LIBS) -lpthread -lm -ldl
test-threads-gpu: $(THREADS_GPU) $(BUILD)/harden/cache_threads_gpu
	HARDEN_GPU=1 $(THREADS_GPU)
	HARDEN_GPU=1 $(BUILD)/harden/cache_threads_gpu
$(BUILD)/harden/cache_threads_gpu: $(HARDEN_DIR)/cache_threads.c $(EXT_SRC) $(ENGINE_SRC) $(HARDEN_HDRS) $(CU_OBJ) $(DLINK)
	@mkdir -p $(dir $@)
	$(HARDEN_CC) -O2 -DGPUAGG_CUDA=1 -I$(CUDA_HOME)/include -o $@ $(HARDEN_DIR)/cache_threads.c \
	  $(EXT_SRC) $(ENGINE_SRC) $(CU_OBJ) $(DLINK) $(CUDA_LIBS) $(SQLITE_LIBS) -lpthread -lm -ldl
else
test-threads-gpu:
	@echo "SKIP: test-threads-gpu needs nvcc"
endif
