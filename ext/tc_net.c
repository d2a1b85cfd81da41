/*
 * tc_net.c: the address grammar and the on_error parser of the network
 * engines (see tc_net.h for the grammar).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tc_backend.h"
#include "tc_net.h"

#define SEPS ",; \t\r\n"

void tc_addr_name(const tc_addr *a, char *buf, size_t len)
{
	if (a->path[0]) {
		snprintf(buf, len, "%s", a->path);
	} else if (strchr(a->host, ':')) {
		snprintf(buf, len, "[%s]:%d", a->host, a->port);
	} else {
		snprintf(buf, len, "%s:%d", a->host, a->port);
	}
}

/* A decimal number in [lo, hi] spanning [s, e): 0, or -1. */
static int number(const char *s, const char *e, long lo, long hi, long *out)
{
	long v = 0;

	if (s == e || e - s > 9) {
		return -1;
	}
	for (; s < e; s++) {
		if (*s < '0' || *s > '9') {
			return -1;
		}
		v = v * 10 + (*s - '0');
	}
	if (v < lo || v > hi) {
		return -1;
	}
	*out = v;
	return 0;
}

static int colons(const char *p)
{
	int n = 0;

	for (; *p; p++) {
		n += *p == ':';
	}
	return n;
}

static int parse_one(const char *opt, const char *s, size_t n, int default_port, tc_addr *a, char *err)
{
	char buf[TC_ADDR_HOST_MAX + 64];
	char *p, *port_s = NULL, *w;
	long v;
	int an = n > 200 ? 200 : (int)n;   /* the address, in messages */

	memset(a, 0, sizeof(*a));
	a->port = default_port;
	a->weight = 1;
	if (n >= sizeof(buf)) {
		snprintf(err, TC_ERRBUF, "Option \"%s\": the address \"%.*s...\" is too long", opt, an, s);
		return -1;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	p = buf;
	if (strncasecmp(p, "unix://", 7) == 0) {
		p += 7;
		if (p[0] != '/') {
			snprintf(err, TC_ERRBUF, "Option \"%s\": the unix socket path in \"%.*s\" must be absolute", opt, an, s);
			return -1;
		}
	} else if (strncasecmp(p, "tcp://", 6) == 0) {
		p += 6;
	} else if (strncasecmp(p, "redis://", 8) == 0) {
		p += 8;
	}
	if (p[0] == '/') {
		if (strlen(p) >= TC_ADDR_PATH_MAX) {
			snprintf(err, TC_ERRBUF, "Option \"%s\": a unix socket path must be shorter than %d bytes", opt, TC_ADDR_PATH_MAX);
			return -1;
		}
		strcpy(a->path, p);
		return 0;
	}
	if (p[0] == '[') {
		char *end = strchr(p, ']');

		if (!end) {
			snprintf(err, TC_ERRBUF, "Option \"%s\": \"%.*s\" lacks the ] of an IPv6 address", opt, an, s);
			return -1;
		}
		*end = '\0';
		p++;
		w = end + 1;
		if ((w = strchr(w, '/'))) {
			*w = '\0';     /* the database of a redis:// URL */
		}
		if (end[1] == ':') {
			port_s = end + 2;
		} else if (end[1]) {
			snprintf(err, TC_ERRBUF, "Option \"%s\": \"%.*s\" is not [address]:port:weight", opt, an, s);
			return -1;
		}
	} else {
		if ((w = strchr(p, '/'))) {
			*w = '\0';     /* the database of a redis:// URL */
		}
		switch (colons(p)) {
		case 0:
			break;
		case 1:
			port_s = strchr(p, ':');
			*port_s++ = '\0';
			break;
		case 2: {
			/* host:port:weight, unless the middle is no port ("::1", "fe80::1") */
			char *c1 = strchr(p, ':'), *c2 = strchr(c1 + 1, ':');

			if (c1 != p && number(c1 + 1, c2, 1, 65535, &v) == 0) {
				*c1 = '\0';
				port_s = c1 + 1;
			}
			break;
		}
		default:
			break;         /* a bare IPv6 address */
		}
	}
	if (!p[0] || strlen(p) >= TC_ADDR_HOST_MAX) {
		snprintf(err, TC_ERRBUF, "Option \"%s\": \"%.*s\" names no host, or too long a one", opt, an, s);
		return -1;
	}
	strcpy(a->host, p);
	if (port_s) {
		w = strchr(port_s, ':');
		if (number(port_s, w ? w : port_s + strlen(port_s), 1, 65535, &v) != 0) {
			snprintf(err, TC_ERRBUF, "Option \"%s\": bad port in \"%.*s\" (1 to 65535)", opt, an, s);
			return -1;
		}
		a->port = (int)v;
		if (w) {
			if (number(w + 1, w + 1 + strlen(w + 1), 0, TC_ADDR_WEIGHT_MAX, &v) != 0) {
				snprintf(err, TC_ERRBUF, "Option \"%s\": bad weight in \"%.*s\" (0 to %d)", opt, an, s, TC_ADDR_WEIGHT_MAX);
				return -1;
			}
			a->weight = v ? (uint32_t)v : 1;
		}
	}
	return 0;
}

int tc_addr_parse(const char *opt, const char *list, int default_port, tc_addr *out, int max, char *err)
{
	const char *s = list;
	int n = 0;

	while (*s) {
		size_t len = strcspn(s, SEPS);

		if (len) {
			if (n == max) {
				snprintf(err, TC_ERRBUF, "Option \"%s\": at most %d servers", opt, max);
				return -1;
			}
			if (parse_one(opt, s, len, default_port, &out[n], err) != 0) {
				return -1;
			}
			n++;
		}
		s += len;
		if (*s) {
			s++;
		}
	}
	if (n == 0) {
		snprintf(err, TC_ERRBUF, "Option \"%s\" names no server", opt);
		return -1;
	}
	return n;
}

int tc_addr_format(const char *host, long port, long weight, char *buf, size_t len)
{
	const char *h = host;
	int r;

	if (strncasecmp(h, "unix://", 7) == 0) {
		h += 7;
	}
	if (!h[0] || strpbrk(h, SEPS)) {
		return -1;
	}
	if (h[0] == '/') {
		r = snprintf(buf, len, "%s", h);
	} else {
		int v6 = strchr(h, ':') && h[0] != '[';
		const char *l = v6 ? "[" : "", *rb = v6 ? "]" : "";

		if (port <= 0) {
			r = snprintf(buf, len, "%s%s%s", l, h, rb);
		} else if (weight <= 0) {
			r = snprintf(buf, len, "%s%s%s:%ld", l, h, rb, port);
		} else {
			r = snprintf(buf, len, "%s%s%s:%ld:%ld", l, h, rb, port, weight);
		}
	}
	return r < 0 || (size_t)r >= len ? -1 : r;
}

int tc_on_error_parse(const char *s, int *out, char *err)
{
	if (!strcasecmp(s, "miss")) {
		*out = TC_ON_ERROR_MISS;
	} else if (!strcasecmp(s, "exception") || !strcasecmp(s, "throw")) {
		*out = TC_ON_ERROR_EXCEPTION;
	} else {
		snprintf(err, TC_ERRBUF, "Option \"on_error\" must be \"miss\" or \"exception\", \"%.100s\" given", s);
		return -1;
	}
	return 0;
}
