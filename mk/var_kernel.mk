# mk/var_kernel.mk — issue 39: the exact variance kernel's test and benchmark.
#
#   make bench-var-kernel   build/bench/var_kernel (--test: exactness against
#                           engine/reduce/xvar.c; no flag: against CUB's sum
#                           of squares, bench/var_kernel.cu's header)
#
# Links every kernels/*.cu object of mk/kernels.mk and engine/reduce/xacc.c +
# xvar.c built on their own.  Without nvcc it says so and succeeds.

VAR_KERNEL_BENCH   := $(BUILD)/bench/var_kernel
VAR_KERNEL_HOSTOBJ := $(BUILD)/kernels_host/xacc.o $(BUILD)/kernels_host/xvar.o

.PHONY: bench-var-kernel

ifneq ($(strip $(NVCC)),)
bench-var-kernel: $(VAR_KERNEL_BENCH)

$(BUILD)/kernels_host/xvar.o: engine/reduce/xvar.c engine/reduce/xvar.h engine/reduce/xacc.h base/ga_partial.h $(STAMP)/host.stamp
	@mkdir -p $(dir $@)
	$(CC) -O2 -std=c11 -Wall -Wextra $(GA_INC) -c -o $@ $<

$(BUILD)/bench/var_kernel.o: bench/var_kernel.cu bench/cuda_bench.cuh $(wildcard kernels/*.h) base/ga_partial.h engine/reduce/xvar.h engine/reduce/xacc.h $(STAMP)/cu.stamp
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(GA_INC) -dc -o $@ $<

$(VAR_KERNEL_BENCH): $(BUILD)/bench/var_kernel.o $(KERNELS_ALL_OBJ) $(VAR_KERNEL_HOSTOBJ)
	$(NVCC) $(GENCODE) -o $@ $^
else
bench-var-kernel:
	@echo "SKIP: $@ needs nvcc"
endif
