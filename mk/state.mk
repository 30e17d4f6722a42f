# mk/state.mk — C unit tests of the exact aggregate states (engine/state.c):
# engine/*.c built with SQLITE_CORE (linked to libsqlite3, no GPU), like
# mk/engine_test.mk.
STATE_TEST := $(BUILD)/tests/test_state_engine
STATE_TEST_SRC := tests/test_state_engine.c $(filter-out engine/matadd.c,$(ENGINE_SRC))

$(STATE_TEST): $(STATE_TEST_SRC) $(wildcard engine/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -D_GNU_SOURCE -DSQLITE_CORE $(SANFLAGS) \
	  -Iengine $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE)) -o $@ $(STATE_TEST_SRC) \
	  $(SANFLAGS) $(SQLITE_LIBS) -lpthread -lm

.PHONY: test-state-engine
test-state-engine: $(STATE_TEST)
	$(STATE_TEST)
