# The engine-level pipeline benchmark (bench/pipeline.c): engine/*.c built
# with SQLITE_CORE and CUDA, linked to the kernels and libsqlite3.
#   make bench-pipeline && build/bench/pipeline --csv bench/out/pipeline.csv
PIPE_BENCH  := $(BUILD)/bench/pipeline
CORE_OBJ    := $(patsubst engine/%.c,$(BUILD)/core/%.o,$(filter-out engine/matadd/%,$(ENGINE_SRC)))

$(BUILD)/core/%.o: engine/%.c $(ALL_HDRS) $(STAMP)/host.stamp
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -D_GNU_SOURCE -DSQLITE_CORE -DGPUAGG_CUDA=1 \
	  $(GA_INC) -I$(CUDA_HOME)/include $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE)) -c -o $@ $<

.PHONY: bench-pipeline
ifeq ($(CUDA),1)
$(PIPE_BENCH): bench/pipeline.c $(CORE_OBJ) $(CU_OBJ) $(DLINK)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE -DSQLITE_CORE $(GA_INC) -Ibench \
	  -I$(CUDA_HOME)/include $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE)) -o $@ \
	  bench/pipeline.c $(CORE_OBJ) $(CU_OBJ) $(DLINK) $(CUDA_LIBS) $(SQLITE_LIBS) -lpthread -lm
bench-pipeline: $(PIPE_BENCH)
else
bench-pipeline:
	@echo "SKIP: bench-pipeline needs nvcc"
endif

# CPU rows of the seeds' reduction table (no GPU needed).
CPU_BENCH := $(BUILD)/bench/cpu_reduce
$(CPU_BENCH): bench/cpu_reduce.c engine/reduce/cpu_reduce.c engine/reduce/cpu_sum.c engine/reduce/xacc.c $(ALL_HDRS) $(STAMP)/host.stamp
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE $(GA_INC) -Ibench -o $@ bench/cpu_reduce.c engine/reduce/cpu_reduce.c engine/reduce/cpu_sum.c engine/reduce/xacc.c -lm
.PHONY: bench-cpu
bench-cpu: $(CPU_BENCH)
	@mkdir -p bench/out
	$(CPU_BENCH) --csv bench/out/cpu_reduce.csv $(if $(BENCH_CLOCK),--clock $(BENCH_CLOCK))
