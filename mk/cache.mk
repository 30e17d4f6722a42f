# mk/cache.mk — the column cache's unit tests.
#   make test-cache-dict   engine/cache/dict.c (TEXT dictionaries, issue 20)
#                          against SQLite's BINARY order (tests/test_cache_dict.c)
CACHE_DICT_TEST := $(BUILD)/tests/test_cache_dict
CACHE_DICT_SRC := tests/test_cache_dict.c engine/cache/dict.c

$(CACHE_DICT_TEST): $(CACHE_DICT_SRC) $(ALL_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 -g -Wall -Wextra -D_GNU_SOURCE -DSQLITE_CORE $(SANFLAGS) \
	  $(GA_INC) $(if $(SQLITE_INCLUDE),-I$(SQLITE_INCLUDE)) -o $@ $(CACHE_DICT_SRC) \
	  $(SQLITE_LIBS) -lpthread -lm

.PHONY: test-cache-dict
test-cache-dict: $(CACHE_DICT_TEST)
	$(CACHE_DICT_TEST)
