# C unit tests of the engine: engine/*.c built with SQLITE_CORE (linked to
# libsqlite3, no GPU) so sqlite3_malloc64 is the library's own.
ENGINE_TEST := $(BUILD)/tests/test_engine
ENGINE_TEST_SRC := tests/test_engine.c $(filter-out engine/matadd/%,$(ENGINE_SRC)) kernels/none.c

$(ENGINE_TEST): $(ENGINE_TEST_SRC) $(ALL_HDRS) $(STAMP)/host.stamp
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -D_GNU_SOURCE -DSQLITE_CORE $(SANFLAGS) \
	  $(GA_INC) $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE)) -o $@ $(ENGINE_TEST_SRC) \
	  $(SANFLAGS) $(SQLITE_LIBS) -lpthread -lm

.PHONY: test-engine
test-engine: $(ENGINE_TEST)
	$(ENGINE_TEST)
