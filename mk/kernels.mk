# mk/kernels.mk — the CUDA kernels' benchmark and adversarial test.
#
#   make bench-kernels      build/bench/kernels (CUB vs gak_* vs seeds V1..V3)
#   make gpu-kernels-test   build/tests/gpu_kernels_test
#
# Both link every kernels/*.cu (bench_*.cu included, which the .so leaves
# out) as relocatable device code plus engine/reduce/xacc.c for the CPU reference.
# On a GPU machine, `make GENCODE=-arch=sm_90 ...` builds faster.  Without
# nvcc the targets say so and succeed, so CI stays green.

KERNELS_ALL_CU  := $(wildcard kernels/*.cu)
# own object folder: a `make GENCODE=-arch=sm_90 bench-kernels` must not leave
# sm_90-only objects where the .so's rule would pick them up
KERNELS_ALL_OBJ := $(patsubst kernels/%.cu,$(BUILD)/kernels_bench/%.o,$(KERNELS_ALL_CU))
KERNELS_BENCH   := $(BUILD)/bench/kernels
KERNELS_TEST    := $(BUILD)/tests/gpu_kernels_test
KERNELS_HOSTOBJ := $(BUILD)/kernels_host/xacc.o

.PHONY: bench-kernels gpu-kernels-test

ifneq ($(strip $(NVCC)),)
bench-kernels: $(KERNELS_BENCH)
gpu-kernels-test: $(KERNELS_TEST)

# xacc.c built on its own (not via the .so's object) so that the bench does
# not depend on the rest of engine/ compiling.
$(KERNELS_HOSTOBJ): engine/reduce/xacc.c engine/reduce/xacc.h base/ga_partial.h $(STAMP)/host.stamp
	@mkdir -p $(dir $@)
	$(CC) -O2 -std=c11 -Wall -Wextra $(GA_INC) -c -o $@ $<

$(BUILD)/kernels_bench/%.o: kernels/%.cu $(wildcard kernels/*.h kernels/*.cuh) base/ga_partial.h $(STAMP)/cu.stamp
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -dc -o $@ $<

$(BUILD)/bench/kernels.o: bench/kernels.cu bench/cuda_bench.cuh $(wildcard kernels/*.h kernels/*.cuh) base/ga_partial.h engine/reduce/xacc.h $(STAMP)/cu.stamp
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(GA_INC) -dc -o $@ $<

$(BUILD)/tests/gpu_kernels_test.o: tests/gpu_kernels_test.cu $(wildcard kernels/*.h kernels/*.cuh) base/ga_partial.h engine/reduce/xacc.h $(STAMP)/cu.stamp
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(GA_INC) -dc -o $@ $<

$(KERNELS_BENCH): $(BUILD)/bench/kernels.o $(KERNELS_ALL_OBJ) $(KERNELS_HOSTOBJ)
	$(NVCC) $(GENCODE) -o $@ $^

$(KERNELS_TEST): $(BUILD)/tests/gpu_kernels_test.o $(KERNELS_ALL_OBJ) $(KERNELS_HOSTOBJ)
	$(NVCC) $(GENCODE) -o $@ $^
else
bench-kernels gpu-kernels-test:
	@echo "SKIP: $@ needs nvcc"
endif
