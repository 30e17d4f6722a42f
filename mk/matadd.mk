# mk/matadd.mk — gpu_matadd benchmarks.
#
#   make bench-matadd       build/bench/matadd: the seeds' 10800x19200 add,
#                           default / queue / stream-N, pinned and pageable
#   make bench-matadd-run   run it (CSV to $(BUILD)/bench/matadd.csv), then
#                           bench/matadd_sql.sh (gpu_matadd vs plain SQL)
#
# The bench is C on the CUDA runtime, linked with kernels/matadd.cu's object
# (built by the main Makefile as relocatable device code; nvcc does the
# device link).  Without nvcc it builds a stub that prints "SKIP: no GPU".

MATADD_BENCH := $(BUILD)/bench/matadd

.PHONY: bench-matadd bench-matadd-run
bench-matadd: $(MATADD_BENCH)

ifeq ($(CUDA),1)
$(BUILD)/bench/matadd.o: bench/matadd.c kernels/gak.h $(STAMP)/c.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -O2 -g -std=c11 -Wall -Wextra -D_GNU_SOURCE -c -o $@ $<

$(MATADD_BENCH): $(BUILD)/bench/matadd.o $(BUILD)/kernels/matadd.o
	$(NVCC) $(GENCODE) -o $@ $^
else
$(MATADD_BENCH): bench/matadd.c $(STAMP)/host.stamp
	@mkdir -p $(dir $@)
	$(CC) -O2 -std=c11 -Wall -Wextra $(GA_INC) -o $@ $<
endif

bench-matadd-run: $(MATADD_BENCH) $(LIB)
	$(MATADD_BENCH) --csv $(BUILD)/bench/matadd.csv
	SQLITE3=$(SQLITE3) sh bench/matadd_sql.sh
