# ward: plain GNU make. `make` builds build/ward (static); `make check` tests.
CC       ?= cc
CFLAGS   ?= -O2 -g
WARNINGS := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes
CPPFLAGS += -Iinit
ALL_CFLAGS = -std=gnu11 $(WARNINGS) $(CFLAGS)
LIBS     := -linih -ljansson
B        := build

INIT_SRCS := init/config.c init/log.c init/parse.c init/procs.c init/spawn.c \
             init/supervise.c init/vm.c
INIT_OBJS := $(INIT_SRCS:%.c=$(B)/%.o)
MAIN_OBJ  := $(B)/init/main.o

UNIT_TESTS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(filter-out tests/unit/unit.c,$(wildcard tests/unit/test_*.c)))
HELPERS    := $(B)/tests/helper

.PHONY: all check check-unit check-behaviour bench clean demo
all: $(B)/ward

$(B)/%.o: %.c $(wildcard init/*.h) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(B)/ward: $(MAIN_OBJ) $(INIT_OBJS)
	$(CC) -static $(ALL_CFLAGS) -o $@ $^ $(LIBS)

$(B)/tests/test_%: tests/unit/test_%.c tests/unit/unit.h $(INIT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(ALL_CFLAGS) -o $@ $< $(INIT_OBJS) $(LIBS)

$(B)/tests/helper: tests/helpers/helper.c
	@mkdir -p $(dir $@)
	$(CC) -static $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

check: check-unit check-behaviour

check-unit: $(UNIT_TESTS)
	@tests/run-unit $(UNIT_TESTS)

check-behaviour: $(B)/ward $(HELPERS)
	/usr/bin/python3 tests/behaviour/behave.py --ward $(B)/ward --helper $(B)/tests/helper \
		--report $(B)/behaviour-report.md

bench: $(B)/ward $(HELPERS)
	tests/bench/init-bench.sh $(B)/ward $(B)/tests/helper

demo: $(B)/ward
	scripts/demo.sh $(B)/ward

clean:
	rm -rf $(B)
