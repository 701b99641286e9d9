/* The snapshot's own helpers (core/gpu.h). */
#include "core/gpu.h"

#include <stddef.h>
#include <string.h>

void ng_gpu_snapshot_clear(ng_gpu_snapshot *s)
{
	memset(s, 0, offsetof(ng_gpu_snapshot, gpu));
	size_t tail = offsetof(ng_gpu_snapshot, gpu) + sizeof s->gpu;
	memset((char *)s + tail, 0, sizeof *s - tail);
}

/* Lower-case hex of v, at least width digits. */
static char *put_hex(char *p, unsigned long v, int width)
{
	char digit[sizeof v * 2];
	int n = 0;
	do {
		digit[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n < width)
		digit[n++] = '0';
	while (n)
		*p++ = digit[--n];
	return p;
}

/* By hand, not snprintf: the kernel log's Xid lines each name a bus, and
 * formatting a few hundred of them through stdio cost the epilog some
 * 100 us. */
void ng_gpu_bus_format(unsigned long domain, unsigned long bus, unsigned long device, char out[16])
{
	char *p = put_hex(out, domain & 0xffffffffUL, 4);
	*p++ = ':';
	p = put_hex(p, bus & 0xffUL, 2);
	*p++ = ':';
	p = put_hex(p, device & 0xffUL, 2);
	*p = '\0';
}
