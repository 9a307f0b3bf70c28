/* libFuzzer target: the whole INI config parser and validator. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "init/config/config.h"
#include "common/log.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_to_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ward_config cfg;
	FILE *f;

	if (size == 0)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	config_defaults(&cfg);
	(void)config_load_stream(&cfg, f, "fuzz.conf");
	fclose(f);
	config_free(&cfg);
	return 0;
}
