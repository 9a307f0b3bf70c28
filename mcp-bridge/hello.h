/* hello: the server name in a TLS ClientHello, the first bytes an agent
 * sends into a proxy tunnel. The proxy does not decrypt; it reads the
 * hello's server_name (SNI) before anything is forwarded, so a tunnel
 * opened to an allowed host cannot carry a hello for another one behind
 * the same address (domain fronting). Pure, for the fuzzer and the tests.
 *
 * The hello may come in several records and in any number of reads: the
 * parser is given everything read so far and says whether it needs more. */
#ifndef WARD_HELLO_H
#define WARD_HELLO_H

#include <stddef.h>

#define HELLO_MAX ((size_t)32768) /* a hello longer than this is refused */

enum hello_result { HELLO_BAD = -1, HELLO_MORE = 0, HELLO_OK = 1 };

/* HELLO_OK with the server name in name (lower case; "" when the hello
 * names none), HELLO_MORE while the hello is not whole, or HELLO_BAD with
 * *why: not TLS, not a ClientHello, malformed, two server_name extensions,
 * longer than HELLO_MAX or in more than 16 records. An encrypted
 * ClientHello's name is its outer one. */
int hello_server_name(const unsigned char *buf, size_t len, char *name, size_t size, const char **why);

#endif
