# mk/cpu_sum_test.mk — tests/test_cpu_sum.c: every variant of the CPU's exact
# sum (engine/reduce/cpu_sum.c) against the per-value reference (run by make test).
CPU_SUM_TEST := $(BUILD)/tests/test_cpu_sum
CPU_SUM_TEST_SRC := tests/test_cpu_sum.c engine/reduce/cpu_sum.c engine/reduce/cpu_reduce.c engine/reduce/xacc.c

$(CPU_SUM_TEST): $(CPU_SUM_TEST_SRC) $(ALL_HDRS) $(STAMP)/host.stamp
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -D_GNU_SOURCE $(SANFLAGS) $(GA_INC) \
	  -o $@ $(CPU_SUM_TEST_SRC) $(SANFLAGS) -lpthread -lm

.PHONY: test-cpu-sum
test-cpu-sum: $(CPU_SUM_TEST)
	$(CPU_SUM_TEST)
