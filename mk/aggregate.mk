# mk/aggregate.mk — gpu_aggregate under a newer SQLite than the system's
# (tests/harden/newsqlite.c: the native interrupt check of 3.41+).
#
#   make test-aggregate-newsqlite [SQLITE_AMALGAMATION=.../sqlite3.c]
#
# The amalgamation defaults to the one better-sqlite3 ships (make test-hosts
# installs it); without it the target prints SKIP.
.PHONY: test-aggregate-newsqlite

SQLITE_AMALGAMATION ?= tests/hosts/node/node_modules/better-sqlite3/deps/sqlite3/sqlite3.c
NEWSQLITE_DIR := $(BUILD)/newsqlite

$(NEWSQLITE_DIR)/sqlite3.o: $(SQLITE_AMALGAMATION)
	@mkdir -p $(dir $@)
	$(CC) -O1 -DSQLITE_THREADSAFE=1 -DSQLITE_ENABLE_COLUMN_METADATA -c -o $@ $<
$(NEWSQLITE_DIR)/newsqlite: tests/harden/newsqlite.c $(NEWSQLITE_DIR)/sqlite3.o
	$(CC) -O1 -g -I$(dir $(SQLITE_AMALGAMATION)) -o $@ $^ -lpthread -lm -ldl

test-aggregate-newsqlite: $(LIB)
	@if [ ! -f "$(SQLITE_AMALGAMATION)" ]; then \
	  echo "SKIP: test-aggregate-newsqlite (no $(SQLITE_AMALGAMATION); make test-hosts installs better-sqlite3)"; \
	else \
	  $(MAKE) --no-print-directory $(NEWSQLITE_DIR)/newsqlite && \
	  $(NEWSQLITE_DIR)/newsqlite $(CURDIR)/$(basename $(LIB)); \
	fi

# engine/scan/scan_group.c against SQLite (tests/test_scan_group.c), linked like
# test_engine (SQLITE_CORE, libsqlite3).
SCAN_GROUP_TEST := $(BUILD)/tests/test_scan_group
SCAN_GROUP_SRC := tests/test_scan_group.c engine/scan/scan_group.c engine/core/bigmem.c engine/state/state.c engine/state/gstate.c engine/state/dset.c \
                  engine/reduce/bestval.c engine/reduce/xacc.c engine/reduce/pct.c engine/reduce/xvar.c

$(SCAN_GROUP_TEST): $(SCAN_GROUP_SRC) $(ALL_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 -g -Wall -Wextra -D_GNU_SOURCE -DSQLITE_CORE $(SANFLAGS) \
	  $(GA_INC) $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE)) -o $@ $(SCAN_GROUP_SRC) \
	  $(SQLITE_LIBS) -lpthread -lm

.PHONY: test-scan-group
test-scan-group: $(SCAN_GROUP_TEST)
	$(SCAN_GROUP_TEST)
