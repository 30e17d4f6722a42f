# gpuagg — SQLite loadable extension with exact aggregates on the GPU.
#
#   make            build ./libgpuagg.so (CUDA kernels when nvcc is found)
#   make test       the whole test suite (CPU machine; GPU tests print SKIP)
#   make test-gpu   the suite forced onto the GPU (GPU machine)
#   make demo       sql/demo.sql: sum vs gpu_sum on a 10M-row table
#   make bench      benchmarks (bench/), results in bench/RESULTS.md
#
# Variables: CUDA=0 forces a CPU-only build; NVCC, CUDA_HOME, SQLITE_INCLUDE.

CC        ?= cc
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(shell command -v nvcc 2>/dev/null || { test -x $(CUDA_HOME)/bin/nvcc && echo $(CUDA_HOME)/bin/nvcc; })
SQLITE_INCLUDE ?=
PYTHON    ?= /usr/bin/python3
SQLITE3   ?= sqlite3
SQLITE_LIBS ?= -lsqlite3

ifeq ($(strip $(NVCC)),)
  CUDA ?= 0
else
  CUDA ?= 1
endif

BUILD   ?= build
LIB     ?= libgpuagg.so
SANFLAGS ?=

CPPFLAGS += -Iengine -Ikernels -Iext $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE))
CFLAGS   ?= -O2 -g
# link-time optimisation inlines the engine's push into the glue's xStep
LTO      ?= -flto=auto
# hardening (mk/harden.mk builds the sanitizer variants with HARDEN= HARDEN_LD=)
HARDEN    ?= -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2 -fstack-protector-strong
HARDEN_LD ?= -Wl,-z,relro,-z,now
CFLAGS   += $(LTO) -std=c11 -fPIC -Wall -Wextra -fvisibility=hidden -D_GNU_SOURCE $(HARDEN) $(SANFLAGS)
LDFLAGS  += $(LTO) $(HARDEN_LD) $(SANFLAGS)
LDLIBS   += -lpthread -lm

# Device code: sm_90 (our H200) plus sm_80/86/89 machine code and compute_90
# PTX, so other GPUs of users work.  cudart is linked statically so the .so
# loads on machines with no CUDA at all (rule 2 of README).
GENCODE ?= -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_86,code=sm_86 \
           -gencode=arch=compute_89,code=sm_89 -gencode=arch=compute_90,code=sm_90 \
           -gencode=arch=compute_90,code=compute_90
NVCCFLAGS ?= -O3 -std=c++17
NVCCFLAGS += $(GENCODE) -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -Iengine -Ikernels

EXT_SRC    := $(wildcard ext/*.c)
ENGINE_SRC := $(wildcard engine/*.c)
CU_SRC     := $(filter-out kernels/bench_%.cu,$(wildcard kernels/*.cu))
C_OBJ      := $(patsubst %.c,$(BUILD)/%.o,$(EXT_SRC) $(ENGINE_SRC))
ENGINE_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(ENGINE_SRC))

# The device side is one of the backends of kernels/gak.h: the CUDA kernels
# and runtime layer, or kernels/none.c (no CUDA: every GPU query says "built
# without CUDA").  tests/fakegpu/ is a third, for tests only (mk/fakegpu.mk).
ifeq ($(CUDA),1)
  CPPFLAGS += -DGPUAGG_CUDA=1 -I$(CUDA_HOME)/include
  CU_OBJ   := $(patsubst %.cu,$(BUILD)/%.o,$(CU_SRC))
  CUDA_LIBS := -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lstdc++
  DLINK    := $(BUILD)/kernels/dlink.o
else
  CU_OBJ   := $(BUILD)/kernels/none.o
  CUDA_LIBS :=
  DLINK    :=
endif

.PHONY: all clean test test-gpu demo bench format
all: $(LIB)

# -z nodelete: SQLite unloads an extension when a connection closes; CUDA's
# context and our pool must outlive that, or every reopen restarts CUDA.
$(LIB): $(C_OBJ) $(CU_OBJ) $(DLINK)
	$(CC) -shared -Wl,-z,defs -Wl,-z,nodelete $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(LDLIBS)
ifeq ($(CUDA),1)
	@echo "gpuagg: built $@ with CUDA kernels ($(NVCC))"
else
	@echo "gpuagg: built $@ WITHOUT CUDA (nvcc not found): CPU path only"
endif

$(BUILD)/%.o: %.c $(wildcard engine/*.h ext/*.h kernels/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/kernels/%.o: kernels/%.cu $(wildcard kernels/*.h kernels/*.cuh engine/ga_partial.h)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -dc -o $@ $<

$(DLINK): $(CU_OBJ)
	$(NVCC) $(GENCODE) -Xcompiler -fPIC -dlink -o $@ $^

clean:
	rm -rf $(BUILD) $(LIB)

format:
	clang-format -i $(wildcard ext/*.[ch] engine/*.[ch] kernels/*.h kernels/*.cu kernels/*.cuh tests/*.c bench/*.c bench/*.cu)

# Test, bench and hardening targets live in mk/*.mk, one file per job.
include $(sort $(wildcard mk/*.mk))
