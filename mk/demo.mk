.PHONY: demo
demo: $(LIB)
	$(SQLITE3) < sql/demo.sql
