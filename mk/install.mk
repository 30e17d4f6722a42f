# mk/install.mk — make install / make uninstall.
#
#   make install                      $(PREFIX)/lib/sqlite3/libgpuagg.so and
#                                     $(PREFIX)/share/doc/gpuagg/ (README, docs/, LICENSE,
#                                     THIRD_PARTY_NOTICES.md, examples)
#   make install PREFIX=$HOME/.local  no root needed
#   make install DESTDIR=/tmp/stage   staged install (packaging)
#   make uninstall                    removes exactly those files
#
# Load it afterwards with `.load /usr/local/lib/sqlite3/libgpuagg` (CLI),
# con.load_extension('/usr/local/lib/sqlite3/libgpuagg') (Python) or
# db.loadExtension('/usr/local/lib/sqlite3/libgpuagg.so') (Node).  SQLite
# has no search path for extensions, so the directory is a convention only:
# lib/sqlite3/ keeps loadable extensions apart from libraries that the
# dynamic linker should find.  The name stays libgpuagg.so: SQLite derives
# the entry point sqlite3_gpuagg_init from it.
#
# Variables: PREFIX (/usr/local), DESTDIR, LIBDIR, SQLITE_EXTDIR, DOCDIR,
# INSTALL_DOCS=0 to leave out the docs.  `install` does not rebuild what is
# built already by someone else: make -o $(LIB) install installs as is.

PREFIX        ?= /usr/local
LIBDIR        ?= $(PREFIX)/lib
SQLITE_EXTDIR ?= $(LIBDIR)/sqlite3
DOCDIR        ?= $(PREFIX)/share/doc/gpuagg
INSTALL       ?= install
INSTALL_DOCS  ?= 1

INSTALL_EXAMPLES := $(wildcard examples/*.py examples/*.js examples/*.sql examples/README.md)
INSTALL_DOC_FILES := $(wildcard README.md LICENSE THIRD_PARTY_NOTICES.md)
INSTALL_DOC_PAGES := $(wildcard docs/*.md)

.PHONY: install uninstall
install: $(LIB)
	$(INSTALL) -d '$(DESTDIR)$(SQLITE_EXTDIR)'
	$(INSTALL) -m 0755 '$(LIB)' '$(DESTDIR)$(SQLITE_EXTDIR)/libgpuagg.so'
ifeq ($(INSTALL_DOCS),1)
	$(INSTALL) -d '$(DESTDIR)$(DOCDIR)/examples' '$(DESTDIR)$(DOCDIR)/docs'
	$(if $(INSTALL_DOC_FILES),$(INSTALL) -m 0644 $(INSTALL_DOC_FILES) '$(DESTDIR)$(DOCDIR)/')
	$(if $(INSTALL_DOC_PAGES),$(INSTALL) -m 0644 $(INSTALL_DOC_PAGES) '$(DESTDIR)$(DOCDIR)/docs/')
	$(if $(INSTALL_EXAMPLES),$(INSTALL) -m 0644 $(INSTALL_EXAMPLES) '$(DESTDIR)$(DOCDIR)/examples/')
endif
	@echo "gpuagg: installed $(DESTDIR)$(SQLITE_EXTDIR)/libgpuagg.so (load it as $(SQLITE_EXTDIR)/libgpuagg)"

uninstall:
	rm -f '$(DESTDIR)$(SQLITE_EXTDIR)/libgpuagg.so'
	rm -f $(foreach f,$(notdir $(INSTALL_DOC_FILES)),'$(DESTDIR)$(DOCDIR)/$(f)') \
	  $(foreach f,$(notdir $(INSTALL_EXAMPLES)),'$(DESTDIR)$(DOCDIR)/examples/$(f)') \
	  $(foreach f,$(notdir $(INSTALL_DOC_PAGES)),'$(DESTDIR)$(DOCDIR)/docs/$(f)')
	-rmdir '$(DESTDIR)$(DOCDIR)/examples' '$(DESTDIR)$(DOCDIR)/docs' '$(DESTDIR)$(DOCDIR)' '$(DESTDIR)$(SQLITE_EXTDIR)' 2>/dev/null || true
