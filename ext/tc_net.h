/*
 * tc_net.h: what the network engines (Redis, Memcached) share, in plain C:
 * the one address grammar of their "server" option and the one parser of
 * "on_error". tc_options.c writes the array forms (Zend's [host, port,
 * weight], Magento's <server> nodes) in this grammar too.
 *
 * An address list: addresses separated by commas, semicolons or blanks
 * (empty items are skipped). One address:
 *
 *   host | host:port | host:port:weight     a name or an IPv4 address
 *   [v6] | [v6]:port | [v6]:port:weight     an IPv6 address, bracketed
 *   v6                                      an IPv6 address without a port
 *   /path | unix:///path                    a unix socket (no port, weight 1)
 *
 * optionally after "tcp://" or "redis://"; a "/..." after host[:port] (the
 * database of a redis:// URL) is ignored: the "database" option selects
 * it. A missing port is the engine's default port; weight 0 counts as 1;
 * the Redis engine ignores weights.
 */
#ifndef TC_NET_H
#define TC_NET_H

#include <stddef.h>
#include <stdint.h>

#define TC_ADDR_HOST_MAX 256
#define TC_ADDR_PATH_MAX 108     /* sun_path */
#define TC_ADDR_WEIGHT_MAX 1000000
#define TC_ADDR_NAME_MAX (TC_ADDR_HOST_MAX + 16)

typedef struct {
	char host[TC_ADDR_HOST_MAX];  /* empty for a unix socket */
	int port;
	uint32_t weight;
	char path[TC_ADDR_PATH_MAX];  /* a unix socket, else empty */
} tc_addr;

/* Parses `list` into out[0..max): the number of addresses (>= 1), or -1
 * with a message naming option `opt` in err (TC_ERRBUF bytes). */
int tc_addr_parse(const char *opt, const char *list, int default_port, tc_addr *out, int max, char *err);

/* "host:port", "[v6]:port" or the socket path, for messages. */
void tc_addr_name(const tc_addr *a, char *buf, size_t len);

/* One address in the grammar above, from its parts (an array form):
 * port <= 0 leaves the port out, weight <= 0 the weight (a socket path
 * takes neither). The length written, or -1 when it does not fit or the
 * host is empty. */
int tc_addr_format(const char *host, long port, long weight, char *buf, size_t len);

/* on_error */
#define TC_ON_ERROR_MISS      0
#define TC_ON_ERROR_EXCEPTION 1

/* "miss", or "exception" (or "throw"), in any case: 0 and *out set, or -1
 * with the message in err. */
int tc_on_error_parse(const char *s, int *out, char *err);

#endif
