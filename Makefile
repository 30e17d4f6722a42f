# gpuagg — SQLite loadable extension with exact aggregates on the GPU.
#
#   make -j         build ./libgpuagg.so (CUDA kernels when nvcc is found)
#   make test       the whole test suite (CPU machine; GPU tests print SKIP)
#   make test-gpu   the suite forced onto the GPU (GPU machine)
#   make demo       sql/demo.sql: sum vs gpu_sum on a 10M-row table
#   make bench      benchmarks (bench/), results in bench/RESULTS.md
#   make wheel      dist/gpuagg-<version>-py3-none-linux_<arch>.whl (mk/wheel.mk)
#   make npm        dist/gpuagg-<version>.tgz (mk/npm.mk)
#   make release    both, tested, with sizes and sha256 (mk/release.mk)
#   make test-build the build itself, in a temporary copy (mk/buildtest.mk)
#
# Variables: CUDA=0 forces a CPU-only build; CC (nvcc keeps its own host
# compiler); LTO (default -flto=auto, used only when a test link with $(CC)
# works; LTO= turns it off); CFLAGS; NVCC, CUDA_HOME, GENCODE; SQLITE_INCLUDE.
#
# Rules this file keeps:
#   1. Every object depends on a stamp of the settings that made it
#      ($(BUILD)/config/*.stamp), so a changed setting (CUDA, LTO, CC, CFLAGS,
#      GENCODE, NVCCFLAGS, ...) rebuilds what it must and a .so never mixes
#      objects of two configurations: `make && make CUDA=0` and the reverse
#      give a .so whose gpuagg_info() tells the truth.
#   2. LTO is probed, never assumed: a gcc without a working LTO plugin stops
#      the link ("could not run lto-wrapper"), so such a compiler builds
#      without LTO, and the build's last line says so.
#   3. The last line of a build says what was built and why it lacks what it
#      lacks (CUDA=0 was asked / nvcc not found; LTO off).

CC        ?= cc
CUDA_HOME ?= /usr/local/cuda
# (looked up once: a recursive ?= would run the shell at every use)
ifeq ($(origin NVCC),undefined)
  NVCC := $(shell command -v nvcc 2>/dev/null || { test -x $(CUDA_HOME)/bin/nvcc && echo $(CUDA_HOME)/bin/nvcc; })
endif
SQLITE_INCLUDE ?=
PYTHON    ?= /usr/bin/python3
SQLITE3   ?= sqlite3
SQLITE_LIBS ?= -lsqlite3

ifeq ($(strip $(NVCC)),)
  CUDA ?= 0
else
  CUDA ?= 1
endif
ifeq ($(CUDA),1)
  ifeq ($(strip $(NVCC)),)
    $(error gpuagg: CUDA=1 was asked but nvcc was not found (set NVCC= or CUDA_HOME=))
  endif
else ifeq ($(origin CUDA),file)
  CPU_ONLY_WHY := nvcc not found; set NVCC= or CUDA_HOME= for the GPU path
else
  CPU_ONLY_WHY := CUDA=0 was asked
endif

BUILD   ?= build
LIB     ?= libgpuagg.so
SANFLAGS ?=

# link-time optimisation inlines the engine's push into the glue's xStep.
# Rule 2: LTO_USED is $(LTO) when a test link with it works, else empty;
# probed at most once per make, and only when a rule needs the flags.
LTO      ?= -flto=auto
LTO_PROBE = $(shell t=$$(mktemp -d 2>/dev/null) || exit 0; \
  printf 'int ga_lto_probe(int x) { return x + 1; }\n' > $$t/p.c && \
  $(CC) $(LTO) -fPIC -shared -o $$t/p.so $$t/p.c >/dev/null 2>&1 && echo ok; rm -rf $$t)
LTO_USED  = $(eval LTO_USED := $(if $(strip $(LTO)),$(if $(LTO_PROBE),$(LTO))))$(LTO_USED)
LTO_NOTE  = $(if $(strip $(LTO)),$(if $(LTO_USED),LTO $(LTO),no LTO ($(CC) cannot link with $(LTO); see README)),no LTO)

# (override: `make CFLAGS=-O3` adds to these instead of dropping -fPIC & co.)
# One folder per capability (mk/layers.txt lists them in layer order, and
# make check-layout checks the order); headers are included by name.
SRC_DIRS := base engine/core engine/reduce engine/state engine/scan engine/cache \
            engine/matadd ext/common ext/workers planner ext/aggregates ext/states \
            ext/aggregate ext/query ext/cache ext/matadd ext/config ext
GA_INC   := $(addprefix -I,$(SRC_DIRS)) -Ikernels
override CPPFLAGS += $(GA_INC) $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE))
CFLAGS   ?= -O2 -g
# hardening (mk/harden.mk builds the sanitizer variants with HARDEN= HARDEN_LD=)
HARDEN    ?= -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2 -fstack-protector-strong
HARDEN_LD ?= -Wl,-z,relro,-z,now
override CFLAGS  += $(LTO_USED) -std=c11 -fPIC -Wall -Wextra -fvisibility=hidden -D_GNU_SOURCE $(HARDEN) $(SANFLAGS)
override LDFLAGS += $(LTO_USED) $(HARDEN_LD) $(SANFLAGS)
LDLIBS   += -lpthread -lm

# Device code: sm_90 (our H200) plus sm_80/86/89 machine code and compute_90
# PTX, so other GPUs of users work.  cudart is linked statically so the .so
# loads on machines with no CUDA at all (rule 2 of README).
GENCODE ?= -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_86,code=sm_86 \
           -gencode=arch=compute_89,code=sm_89 -gencode=arch=compute_90,code=sm_90 \
           -gencode=arch=compute_90,code=compute_90
NVCCFLAGS ?= -O3 -std=c++17
override NVCCFLAGS += $(GENCODE) -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -Ibase -Ikernels

# the SQLite glue and the planner; the engine (host side of the kernels)
EXT_SRC    := $(wildcard ext/*.c ext/*/*.c planner/*.c)
ENGINE_SRC := $(wildcard engine/*/*.c)
# every header of the library (objects depend on all: a header that moved
# or changed rebuilds what may include it)
ALL_HDRS   := $(wildcard base/*.h engine/*/*.h ext/*/*.h planner/*.h kernels/*.h)
CU_SRC     := $(filter-out kernels/bench_%.cu,$(wildcard kernels/*.cu))
C_OBJ      := $(patsubst %.c,$(BUILD)/%.o,$(EXT_SRC) $(ENGINE_SRC))
ENGINE_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(ENGINE_SRC))

# The device side is one of the backends of kernels/gak.h: the CUDA kernels
# and runtime layer, or kernels/none.c (no CUDA: every GPU query says "built
# without CUDA").  tests/fakegpu/ is a third, for tests only (mk/fakegpu.mk).
ifeq ($(CUDA),1)
  override CPPFLAGS += -DGPUAGG_CUDA=1 -I$(CUDA_HOME)/include
  CU_OBJ   := $(patsubst %.cu,$(BUILD)/%.o,$(CU_SRC))
  CUDA_LIBS := -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lstdc++
  DLINK    := $(BUILD)/kernels/dlink.o
else
  CU_OBJ   := $(BUILD)/kernels/none.o
  CUDA_LIBS :=
  DLINK    :=
endif

# ---- rule 1: configuration stamps ----
# $(STAMP)/NAME.stamp holds the text of GA_CONF_NAME; its recipe always runs
# but rewrites (and so dates) the file only when that text changed.  Any
# mk/*.mk may add a GA_CONF_x of its own and depend on $(STAMP)/x.stamp.
# The new text goes to a file of the recipe's own ($$$$: its shell's pid), so
# that two makes in one tree at once (CI's lanes) never share a half-written
# or removed file.
STAMP      := $(BUILD)/config
GA_CONF_c  = $(CC) | $(CPPFLAGS) | $(CFLAGS)
GA_CONF_cu = $(NVCC) | $(NVCCFLAGS)
GA_CONF_ld = $(CC) | CUDA=$(CUDA) | $(LDFLAGS) | $(CUDA_LIBS) $(LDLIBS)
# test programs compiled straight from the sources (mk/engine_test.mk, mk/fakegpu.mk)
GA_CONF_host = $(CC) | $(SANFLAGS) | $(SQLITE_INCLUDE) | $(SQLITE_LIBS)

.PHONY: all clean test test-gpu demo bench format FORCE
all: $(LIB)

$(STAMP)/%.stamp: FORCE | $(STAMP)/
	@printf '%s\n' '$(subst ','\'',$(GA_CONF_$*))' >$@.$$$$ && \
	  { cmp -s $@.$$$$ $@ && rm -f $@.$$$$ || mv -f $@.$$$$ $@; }
$(STAMP)/:
	@mkdir -p $@
# (stamps named only by pattern rules would count as intermediate: kept)
.PRECIOUS: $(STAMP)/%.stamp

# -z nodelete: SQLite unloads an extension when a connection closes; CUDA's
# context, our pool and the kept column cache (engine/cache/cache.c rule 7)
# must outlive that, or every reopen restarts CUDA.
# mk/exports.map: sqlite3_gpuagg_init is the only exported symbol.
$(LIB): $(C_OBJ) $(CU_OBJ) $(DLINK) $(STAMP)/ld.stamp mk/exports.map
	$(CC) -shared -Wl,-z,defs -Wl,-z,nodelete -Wl,--version-script=mk/exports.map $(LDFLAGS) -o $@ $(filter %.o,$^) $(CUDA_LIBS) $(LDLIBS)
ifeq ($(CUDA),1)
	@echo "gpuagg: built $@ with CUDA kernels ($(NVCC)), $(LTO_NOTE)"
else
	@echo "gpuagg: built $@ WITHOUT CUDA ($(CPU_ONLY_WHY)): CPU path only, $(LTO_NOTE)"
endif

$(BUILD)/%.o: %.c $(ALL_HDRS) $(STAMP)/c.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# percentiles: SQLite's blend v1 + (v2 - v1) * f, never fused (pct.c rule 2)
$(BUILD)/engine/reduce/pct.o: override CFLAGS += -ffp-contract=off
# expressions: no FMA contraction, besides the _rn intrinsics (cache_expr.cu)
$(BUILD)/kernels/cache_expr.o: override NVCCFLAGS += --fmad=false
$(BUILD)/kernels/%.o: kernels/%.cu $(wildcard kernels/*.h kernels/*.cuh base/*.h) $(STAMP)/cu.stamp
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -dc -o $@ $<

$(DLINK): $(CU_OBJ) $(STAMP)/cu.stamp
	$(NVCC) $(GENCODE) -Xcompiler -fPIC -dlink -o $@ $(CU_OBJ)

clean:
	rm -rf $(BUILD) $(LIB) dist

format:
	clang-format -i $(wildcard base/*.h engine/*/*.[ch] ext/*.[ch] ext/*/*.[ch] planner/*.[ch] kernels/*.h kernels/*.cu kernels/*.cuh kernels/*.c tests/*.c tests/harden/*.[ch] bench/*.c bench/*.cu)

# Test, bench, packaging and hardening targets live in mk/*.mk, one file per job.
include $(sort $(wildcard mk/*.mk))

# Everything `make test` runs, built and not run: CI builds it on both cores
# before its two lanes, so that no two makes build one file at once.
.PHONY: test-programs
test-programs: $(LIB) $(FAKE_LIB) $(FAKE_RESTORE) $(WHEEL) $(ENGINE_TEST) \
               $(SCAN_GROUP_TEST) $(CPU_SUM_TEST) $(STATE_TEST) $(STATE_WORKER)
