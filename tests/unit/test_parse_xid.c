/* Kernel Xid lines: every format the driver and the loggers print, what is
 * not an Xid, scanning with a time filter, and attaching events to GPUs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "parse/xid.h"

static ng_gpu_snapshot snap;

static ng_xid_event parse_ok(const char *line)
{
	ng_xid_event e;
	memset(&e, 0x5A, sizeof e);
	if (ng_xid_parse_line(line, strlen(line), &e) != 1)
		fail_msg("not read as an Xid: %s", line);
	return e;
}

static void parse_not(const char *line)
{
	ng_xid_event e;
	memset(&e, 0x5A, sizeof e);
	if (ng_xid_parse_line(line, strlen(line), &e) != 0)
		fail_msg("read as Xid %d: %s", e.code, line);
}

/* ---- the driver's formats ----------------------------------------------------------- */

static void test_driver_formats(void **state)
{
	(void)state;
	/* 570: no process */
	ng_xid_event e = parse_ok("NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus.");
	assert_int_equal(e.code, 79);
	assert_string_equal(e.bus, "0000:44:00");
	assert_int_equal(e.pid, -1);
	assert_string_equal(e.name, "");
	assert_int_equal(e.gpu_instance, -1);
	assert_int_equal(e.compute_instance, -1);
	assert_true(e.at_usec == -1);
	assert_string_equal(e.message, "GPU has fallen off the bus.");

	/* 570: with a process */
	e = parse_ok("NVRM: Xid (PCI:0000:c1:00): 31, pid=2646416, name=python, channel 0x0000001a, intr 00000000. "
	             "MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f_12345000");
	assert_int_equal(e.code, 31);
	assert_int_equal(e.pid, 2646416);
	assert_string_equal(e.name, "python");
	assert_string_equal(e.bus, "0000:c1:00");
	assert_true(strncmp(e.message, "channel 0x0000001a, intr 00000000. MMU Fault", 44) == 0);

	/* older source: unknown process, quoted and not */
	e = parse_ok("NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception "
	             "on (GPC 9, TPC 1, SM 1): Out Of Range Address");
	assert_int_equal(e.code, 13);
	assert_int_equal(e.pid, -1);
	assert_string_equal(e.name, "");
	assert_string_equal(e.message, "Graphics SM Warp Exception on (GPC 9, TPC 1, SM 1): Out Of Range Address");
	e = parse_ok("NVRM: Xid (PCI:0000:38:00): 13, pid=<unknown>, name=<unknown>, Graphics Exception");
	assert_int_equal(e.pid, -1);
	assert_string_equal(e.message, "Graphics Exception");

	/* a pid without a name */
	e = parse_ok("NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset "
	             "gpu to activate.");
	assert_int_equal(e.code, 63);
	assert_int_equal(e.pid, 1896);
	assert_string_equal(e.name, "");
	assert_string_equal(e.bus, "0000:10:1c");
	assert_string_equal(e.message, "Row Remapper: New row marked for remapping, reset gpu to activate.");

	/* MIG: GPU instance, then compute instance too */
	e = parse_ok("NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: No, "
	             "D-RST: No");
	assert_int_equal(e.code, 94);
	assert_int_equal(e.gpu_instance, 5);
	assert_int_equal(e.compute_instance, -1);
	assert_string_equal(e.bus, "0000:01:00");
	e = parse_ok("NVRM: Xid (PCI:0000:01:00 GPU-I:05 GPU-CI:01): 43, pid=77, name=train, Ch 00000008");
	assert_int_equal(e.gpu_instance, 5);
	assert_int_equal(e.compute_instance, 1);
	assert_int_equal(e.pid, 77);
	assert_string_equal(e.name, "train");

	/* very old drivers: no "PCI:" */
	e = parse_ok("NVRM: Xid (0000:03:00): 14, Channel 00000001");
	assert_int_equal(e.code, 14);
	assert_string_equal(e.bus, "0000:03:00");
	assert_string_equal(e.message, "Channel 00000001");

	/* Xid 45 naming its cause */
	e = parse_ok("NVRM: Xid (PCI:0000:3b:00): 45, pid=991, name=python3, Ch 00000010 caused by previous Xid 48");
	assert_int_equal(e.code, 45);
	assert_non_null(strstr(e.message, "caused by previous Xid 48"));

	/* a non-zero domain (Grace), upper case, an 8-digit domain, a function */
	e = parse_ok("NVRM: Xid (PCI:0003:00:00): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error detected "
	             "on link 14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)");
	assert_string_equal(e.bus, "0003:00:00");
	assert_int_equal(e.code, 74);
	assert_string_equal(parse_ok("NVRM: Xid (PCI:0000:3B:1F): 48, DBE").bus, "0000:3b:1f");
	assert_string_equal(parse_ok("NVRM: Xid (PCI:00000000:3B:00): 48, DBE").bus, "0000:3b:00");
	assert_string_equal(parse_ok("NVRM: Xid (PCI:0000:3b:00.0): 48, DBE").bus, "0000:3b:00");
	assert_string_equal(parse_ok("NVRM: xid (pci:0000:3b:00): 48, DBE").bus, "0000:3b:00");

	/* eight raw words and nothing else */
	e = parse_ok("NVRM: Xid (PCI:0000:03:00): 62, 00000a9f 00000a85 00000a72 00003786 00001d3e 000027d6 01013289 "
	             "00000000");
	assert_int_equal(e.code, 62);
	assert_int_equal(e.pid, -1);
	assert_true(strncmp(e.message, "00000a9f", 8) == 0);

	/* the code alone */
	e = parse_ok("NVRM: Xid (PCI:0000:03:00): 119");
	assert_int_equal(e.code, 119);
	assert_string_equal(e.message, "");
	/* a future token inside the parentheses is passed over */
	e = parse_ok("NVRM: Xid (PCI:0000:03:00 GPU-X:7): 13, x");
	assert_int_equal(e.code, 13);
}

/* ---- what the loggers put in front ---------------------------------------------------- */

static void test_logger_prefixes(void **state)
{
	(void)state;
	/* /dev/kmsg: prio,seq,usec,flags; */
	ng_xid_event e = parse_ok("3,3964,206764307,-;NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.");
	assert_true(e.at_usec == 206764307);
	assert_int_equal(e.code, 79);
	e = parse_ok("4,12,5,c,caller=T123;NVRM: Xid (PCI:0000:3b:00): 13, x");
	assert_true(e.at_usec == 5);

	/* dmesg */
	e = parse_ok("[2397166.983093] NVRM: Xid (PCI:0000:0f:00): 94, pid=2503421, name=python3, Ch 00000008");
	assert_true(e.at_usec == 2397166983093LL);
	assert_string_equal(e.name, "python3");
	e = parse_ok("[  966.5] NVRM: Xid (PCI:0000:0f:00): 94, x");
	assert_true(e.at_usec == 966500000LL);

	/* syslog with the dmesg time inside */
	e = parse_ok("Nov 22 18:29:55 hostname kernel: [ 966.503025] NVRM: Xid (0000:01:00): 31, Ch 0000000b, engmask "
	             "00000120, intr 10000000");
	assert_true(e.at_usec == 966503025LL);
	assert_string_equal(e.bus, "0000:01:00");
	assert_string_equal(e.message, "Ch 0000000b, engmask 00000120, intr 10000000");

	/* journalctl -k, and with monotonic times */
	e = parse_ok("Feb 23 16:24:18 gpu-node-7 kernel: NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, "
	             "Timeout after 6s of waiting for RPC response from GPU4 GSP!");
	assert_true(e.at_usec == -1);
	assert_string_equal(e.name, "nvidia-smi");
	e = parse_ok("[  417.123456] gpu-node-7 kernel: NVRM: Xid (PCI:0000:9b:00): 120, GSP Error");
	assert_true(e.at_usec == 417123456LL);

	/* wall-clock times are not the kernel's clock */
	assert_true(parse_ok("[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, x").at_usec == -1);
	assert_true(parse_ok("kern  :warn  : 2025-01-21T04:41:44,283302+00:00 NVRM: Xid (PCI:0000:38:00): 13, x").at_usec ==
	            -1);
	assert_true(parse_ok("2024-11-15T12:02:03,470068+00:00 NVRM: Xid (PCI:0000:38:00): 13, x").at_usec == -1);
}

static void test_not_xids(void **state)
{
	(void)state;
	const char *lines[] = {
		"",
		"NVRM: GPU at PCI:0000:9b:00: GPU-509665ad-b600-ac93-3616-d754b23d636d",
		"NVRM: GPU Board Serial Number: 1650124014249",
		("NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:9b:00 (printing 1 of every 30).  The GPU "
		 "likely needs to be reset."),
		"NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.158.01  Release Build",
		"NVRM:     -1    103  GSP_RM_ALLOC          0x0000000000002080 0x0000000000000004",
		"Xid (PCI:0000:3b:00): 79, no NVRM",
		"NVRM: Xid 79",
		"NVRM: Xid PCI:0000:3b:00: 79, no parenthesis",
		"NVRM: Xid (PCI:0000:3b:00: 79, unclosed",
		"NVRM: Xid (PCI:0000:3b:00) 79, no colon",
		"NVRM: Xid (PCI:0000:3b:00): x79, not a number",
		"NVRM: Xid (PCI:0000:3b:00): 79x, not a number",
		"NVRM: Xid (PCI:0000:3b:00): , no code",
		"NVRM: Xid (PCI:0000:3b:00): 1234567, too long",
		"NVRM: Xid (PCI:10000:3b:00): 79, domain too large",
		"NVRM: Xid (PCI:000:3b:00): 79, domain too short",
		"NVRM: Xid (PCI:0000:3b:0000): 79, device too long",
		"NVRM: Xid (PCI:0000:3b:20): 79, no device 0x20",
		"NVRM: Xid (PCI:0000:3b): 79, short",
		"NVRM: Xid (GPU-I:05): 79, no address",
		"NVRM: Xid (PCI:0000:3b:00 GPU-I:): 79, empty instance",
		"NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:26b5) installed in this system is not supported",
		"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),",
	};
	for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
		parse_not(lines[i]);
	ng_xid_event e;
	assert_int_equal(ng_xid_parse_line(NULL, 0, &e), 0);
	/* only len bytes are read */
	const char *line = "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.";
	assert_int_equal(ng_xid_parse_line(line, 20, &e), 0);
	assert_int_equal(ng_xid_parse_line(line, 29, &e), 1);
	assert_int_equal(e.code, 7);
}

static void test_hostile_lines(void **state)
{
	(void)state;
	/* longer than any buffer: cut, never overrun */
	size_t n = 100000;
	char *big = malloc(n + 1);
	assert_non_null(big);
	int lead = snprintf(big, n, "[1.000001] NVRM: Xid (PCI:0000:3b:00): 79, pid=12, name=");
	memset(big + lead, 'n', 200);
	memcpy(big + lead + 200, ", ", 2);
	memset(big + lead + 202, 'm', n - (size_t)lead - 202);
	big[n] = '\0';
	ng_xid_event e = parse_ok(big);
	assert_int_equal(e.code, 79);
	assert_int_equal(e.pid, 12);
	assert_int_equal(strlen(e.name), sizeof e.name - 1);
	assert_int_equal(strlen(e.message), sizeof e.message - 1);
	assert_true(e.at_usec == 1000001);
	/* a long prefix before NVRM */
	memset(big, 'x', n);
	memcpy(big + n - 40, "NVRM: Xid (PCI:0000:3b:00): 48, DBE", 35);
	assert_int_equal(ng_xid_parse_line(big, n - 5, &e), 1);
	assert_int_equal(e.code, 48);

	/* a prefix dense in N's (the search for "NVRM:" changes its method on
	 * them), "NVRM" cut at the end of the text, and "NVRM:" the last bytes */
	memset(big, 'N', n);
	memcpy(big + n - 60, "NVRM NVRM; NVRM: Xid (PCI:0000:3b:00): 62, dense", 48);
	assert_int_equal(ng_xid_parse_line(big, n - 12, &e), 1);
	assert_int_equal(e.code, 62);
	assert_string_equal(e.message, "dense");
	for (size_t i = 0; i < n; i += 2)
		big[i] = 'N', big[i + 1] = 'V';
	assert_int_equal(ng_xid_parse_line(big, n, &e), 0);
	memcpy(big + n - 60, "NVRM: Xid (PCI:0000:3b:00): 94, pairs", 37);
	assert_int_equal(ng_xid_parse_line(big, n - 23, &e), 1);
	assert_int_equal(e.code, 94);
	assert_int_equal(ng_xid_scan(big, n - 23, -1, NULL, NULL), 1);
	assert_int_equal(ng_xid_parse_line("NVRM", 4, &e), 0);
	assert_int_equal(ng_xid_parse_line("x NVRM:", 7, &e), 0);
	assert_int_equal(ng_xid_scan("NVRM:", 5, -1, NULL, NULL), 0);
	assert_int_equal(ng_xid_scan("NNNNVRM: Xid (0000:3b:00): 31, x", 32, -1, NULL, NULL), 1);
	free(big);

	/* NUL bytes inside the line; control bytes and non-ASCII in the text */
	const char nul[] = "[5.000000] \0junk NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=a\tb, msg\0with\x01" "\xc3\xa9nul";
	assert_int_equal(ng_xid_parse_line(nul, sizeof nul - 1, &e), 1);
	assert_int_equal(e.code, 13);
	assert_string_equal(e.name, "a?b");
	assert_string_equal(e.message, "msg?with???nul");
	assert_true(e.at_usec == 5000000);
	/* a NUL inside the address stops it */
	const char nul2[] = "NVRM: Xid (PCI:0000:3b\0:00): 13, x";
	assert_int_equal(ng_xid_parse_line(nul2, sizeof nul2 - 1, &e), 0);
}

/* ---- scanning ----------------------------------------------------------------------- */

#define MAXEV 256
static ng_xid_event seen[MAXEV];
static size_t n_seen;

static void collect(const ng_xid_event *e, void *arg)
{
	assert_ptr_equal(arg, &n_seen);
	if (n_seen < MAXEV)
		seen[n_seen++] = *e;
}

static size_t scan(const char *text, size_t len, int64_t since)
{
	n_seen = 0;
	size_t n = ng_xid_scan(text, len, since, collect, &n_seen);
	assert_int_equal(n, n_seen);
	return n;
}

static void test_scan(void **state)
{
	(void)state;
	const char text[] = "6,100,1000000,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.124.04\n"
	                    "4,101,2000000,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=9, name=a, x\r\n"
	                    "4,102,3000000,-;NVRM: Xid (PCI:0000:3b:00): 31, pid=9, name=a, y\n"
	                    "NVRM: Xid (PCI:0000:5c:00): 48, no time\n"
	                    "\n"
	                    "4,103,4000000,-;NVRM: Xid (PCI:0000:5c:00): 63, z"; /* no final newline */
	assert_int_equal(scan(text, sizeof text - 1, -1), 4);
	assert_int_equal(seen[0].code, 13);
	assert_string_equal(seen[0].message, "x");
	assert_int_equal(seen[3].code, 63);
	assert_true(seen[3].at_usec == 4000000);
	/* at or after: lines without a time are kept */
	assert_int_equal(scan(text, sizeof text - 1, 3000000), 3);
	assert_int_equal(seen[0].code, 31);
	assert_int_equal(seen[1].code, 48);
	assert_int_equal(scan(text, sizeof text - 1, 4000001), 1);
	assert_int_equal(seen[0].code, 48);
	/* no callback: only the count */
	assert_int_equal(ng_xid_scan(text, sizeof text - 1, -1, NULL, NULL), 4);
	assert_int_equal(ng_xid_scan(NULL, 10, -1, NULL, NULL), 0);
	assert_int_equal(ng_xid_scan("", 0, -1, NULL, NULL), 0);
}

static void test_fallen_off_the_bus_without_xid(void **state)
{
	(void)state;
	/* dmesg prints the one report over three lines */
	const char text[] = "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
	                    "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
	                    "               NVRM: fallen off the bus and is not responding to commands.\n"
	                    "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n";
	assert_int_equal(scan(text, sizeof text - 1, -1), 1);
	assert_int_equal(seen[0].code, 79);
	assert_string_equal(seen[0].bus, "0000:b3:00");
	assert_true(seen[0].at_usec == 1843308145LL);
	assert_non_null(strstr(seen[0].message, "fallen off the bus"));
	assert_non_null(strstr(seen[0].message, "without an Xid"));

	/* /dev/kmsg keeps it in one record, its line breaks escaped */
	ng_xid_event e = parse_ok("3,812,1843308145,-;NVRM: The NVIDIA GPU 0000:B3:00.0\\x0a               NVRM: (PCI ID: "
	                          "10de:26b5) installed in this system has\\x0a               NVRM: fallen off the bus and "
	                          "is not responding to commands.");
	assert_int_equal(e.code, 79);
	assert_string_equal(e.bus, "0000:b3:00");

	/* a report that never says "fallen off the bus" is not one */
	const char other[] = "[ 5.0] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
	                     "        NVRM: (PCI ID: 10de:26b5) installed in this system is\n"
	                     "        NVRM: not supported by the 570.158.01 NVIDIA driver release.\n"
	                     "        NVRM: fallen off the bus\n"; /* too far: the report has three lines */
	assert_int_equal(scan(other, sizeof other - 1, -1), 0);
	/* the words after an unrelated line do not count */
	const char gap[] = "[ 5.0] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
	                   "[ 5.1] usb 1-1: new device\n"
	                   "        NVRM: fallen off the bus\n";
	assert_int_equal(scan(gap, sizeof gap - 1, -1), 0);
	/* the next report starting ends the first */
	const char two[] = "[ 5.0] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
	                   "[ 5.0] NVRM: The NVIDIA GPU 0000:b4:00.0\n"
	                   "        NVRM: fallen off the bus\n";
	assert_int_equal(scan(two, sizeof two - 1, -1), 1);
	assert_string_equal(seen[0].bus, "0000:b4:00");
}

/* ---- attaching to GPUs -------------------------------------------------------------- */

static void two_gpus(void)
{
	memset(&snap, 0, sizeof snap);
	snap.nvml = NG_FIELD_OK;
	snap.n_gpus = 2;
	snprintf(snap.gpu[0].bus, sizeof snap.gpu[0].bus, "0000:0f:00");
	snap.gpu[1].index = 1;
	/* as NVML's legacy bus id spells it, before anyone normalized it */
	snprintf(snap.gpu[1].bus, sizeof snap.gpu[1].bus, "0000:01:00.0");
}

static void test_attach(void **state)
{
	(void)state;
	const char text[] = "[2397166.983093] NVRM: Xid (PCI:0000:0f:00): 94, pid=2503421, name=python3, Ch 00000008\n"
	                    "NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9)\n"
	                    "NVRM: Xid (PCI:0000:99:00): 79, GPU has fallen off the bus\n"
	                    "NVRM: Xid (PCI:0000:01:00): 95, Uncontained: LTC TAG (0x2,0x1). RST: Yes, D-RST: No\n";
	assert_int_equal(scan(text, sizeof text - 1, -1), 4);
	two_gpus();
	assert_int_equal(ng_xid_attach(&snap, seen, n_seen), 1);
	assert_int_equal(snap.gpu[0].n_xid, 1);
	assert_int_equal(snap.gpu[0].xid[0].code, 94);
	assert_true(snap.gpu[0].xid[0].at_usec == 2397166983093LL);
	assert_string_equal(snap.gpu[0].xid[0].message, "pid=2503421, name=python3: Ch 00000008");
	assert_int_equal(snap.gpu[1].n_xid, 2);
	assert_string_equal(snap.gpu[1].xid[0].message, "GPU-I:05, pid=7194: Contained: CE User Channel (0x9)");
	assert_int_equal(snap.gpu[1].xid[1].code, 95);
	assert_true(snap.gpu[1].xid[1].at_usec == -1);
	assert_string_equal(snap.gpu[1].xid[1].message, "Uncontained: LTC TAG (0x2,0x1). RST: Yes, D-RST: No");

	/* the newest NG_GPU_XID_MAX are kept */
	two_gpus();
	ng_xid_event many[NG_GPU_XID_MAX + 8];
	for (size_t i = 0; i < sizeof many / sizeof *many; i++) {
		many[i] = seen[0];
		many[i].code = (int)i;
	}
	assert_int_equal(ng_xid_attach(&snap, many, sizeof many / sizeof *many), 0);
	assert_int_equal(snap.gpu[0].n_xid, NG_GPU_XID_MAX);
	assert_int_equal(snap.gpu[0].xid[0].code, 8);
	assert_int_equal(snap.gpu[0].xid[NG_GPU_XID_MAX - 1].code, NG_GPU_XID_MAX + 7);

	/* an event without a bus, or a GPU without one, matches nothing */
	two_gpus();
	snap.gpu[0].bus[0] = '\0';
	ng_xid_event blank = seen[0];
	blank.bus[0] = '\0';
	assert_int_equal(ng_xid_attach(&snap, &blank, 1), 1);
	assert_int_equal(ng_xid_attach(&snap, seen, 1), 1);
	assert_int_equal(ng_xid_attach(&snap, NULL, 0), 0);

	/* a long message with every part fits, cut */
	two_gpus();
	ng_xid_event full = seen[1];
	full.compute_instance = 3;
	memset(full.name, 'n', sizeof full.name - 1);
	full.name[sizeof full.name - 1] = '\0';
	memset(full.message, 'm', sizeof full.message - 1);
	full.message[sizeof full.message - 1] = '\0';
	assert_int_equal(ng_xid_attach(&snap, &full, 1), 0);
	assert_int_equal(strlen(snap.gpu[1].xid[0].message), sizeof snap.gpu[1].xid[0].message - 1);
	assert_true(strncmp(snap.gpu[1].xid[0].message, "GPU-I:05 GPU-CI:03, pid=7194, name=nnn", 38) == 0);
}

/* ---- the published fixtures --------------------------------------------------------- */

#ifndef NODEGATE_FIXTURES
#define NODEGATE_FIXTURES "fixtures-not-configured"
#endif
#define FIXDIR NODEGATE_FIXTURES "/xid"

static size_t scan_file(const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", FIXDIR, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	size_t count = scan(buf, (size_t)n, -1);
	free(buf);
	return count;
}

static bool fixtures_present(void)
{
	DIR *d = opendir(FIXDIR);
	if (!d) {
		printf("fixtures folder %s is absent: skipping the fixture files\n", FIXDIR);
		return false;
	}
	closedir(d);
	return true;
}

static void test_fixtures(void **state)
{
	(void)state;
	if (!fixtures_present())
		skip();

	/* one line from each of six sources */
	assert_int_equal(scan_file("xid_lines_collected_mixed_formats.log"), 11);
	const int codes[] = {94, 64, 63, 74, 94, 94, 95, 31, 62, 31, 79};
	const char *buses[] = {"0000:0f:00", "0000:0f:00", "0000:10:1c", "0003:00:00", "0000:01:00", "0000:01:00",
	                       "0000:01:00", "0000:01:00", "0000:03:00", "0000:03:00", "0000:44:00"};
	for (size_t i = 0; i < 11; i++) {
		assert_int_equal(seen[i].code, codes[i]);
		assert_string_equal(seen[i].bus, buses[i]);
	}
	assert_int_equal(seen[1].pid, -1);
	assert_true(strncmp(seen[1].message, "Row Remapper Error", 18) == 0);
	assert_int_equal(seen[4].gpu_instance, 5);
	assert_int_equal(seen[5].gpu_instance, -1);
	assert_true(seen[7].at_usec == 966503025LL);
	assert_string_equal(seen[9].name, "chrome");
	assert_string_equal(seen[10].message, "GPU has fallen off the bus");

	/* a burst of 13 then a 43, dmesg --decode --time-format=iso */
	assert_int_equal(scan_file("xid13_graphics_sm_exception_and_xid43_dmesg-decode-iso.log"), 17);
	for (size_t i = 0; i < 16; i++) {
		assert_int_equal(seen[i].code, 13);
		assert_int_equal(seen[i].pid, -1);
		assert_true(seen[i].at_usec == -1);
	}
	assert_int_equal(seen[16].code, 43);
	assert_int_equal(seen[16].pid, 2924364);
	assert_string_equal(seen[16].name, "pt_main_thread");
	assert_string_equal(seen[16].message, "Ch 00000008");

	/* Xid 119 among RPC history, a stack trace and rate limiting */
	assert_int_equal(scan_file("xid119_gsp_rpc_timeout_dmesg-T_h100_xe9680.log"), 5);
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(seen[i].code, 119);
		assert_string_equal(seen[i].bus, "0000:9b:00");
	}
	assert_string_equal(seen[4].name, "gpud");

	/* fallen off the bus, no Xid, over three lines */
	assert_int_equal(scan_file("fallen_off_bus_multiline_no_xid_dmesg_570.158.01.log"), 1);
	assert_int_equal(seen[0].code, 79);
	assert_string_equal(seen[0].bus, "0000:b3:00");
	assert_true(seen[0].at_usec == 1843308145LL);
}

/* "caused by previous Xid N": the cause is read from the whole text, in
 * any case, and only a whole number counts. */
static void test_caused_by(void **state)
{
	(void)state;
	ng_xid_event e = parse_ok("NVRM: Xid (PCI:0000:18:00): 45, pid=9120, name=python3, Ch 00000010, "
	                          "caused by previous Xid 149");
	assert_int_equal(e.code, 45);
	assert_int_equal(e.cause, 149);
	e = parse_ok("NVRM: Xid (PCI:0000:18:00): 45, Ch 00000010, Caused By Previous XID: 145.");
	assert_int_equal(e.cause, 145);
	e = parse_ok("NVRM: Xid (PCI:0000:18:00): 45, pid=1, name=x, Ch 00000010");
	assert_int_equal(e.cause, 0);
	e = parse_ok("NVRM: Xid (PCI:0000:18:00): 45, caused by previous Xid 12345678");
	assert_int_equal(e.cause, 0); /* more digits than a code has */
	e = parse_ok("NVRM: Xid (PCI:0000:18:00): 45, caused by previous Xid x149");
	assert_int_equal(e.cause, 0);
	ng_gpu_snapshot *s = &snap;
	memset(s, 0, sizeof *s);
	s->n_gpus = 1;
	snprintf(s->gpu[0].bus, sizeof s->gpu[0].bus, "0000:18:00");
	e = parse_ok("NVRM: Xid (PCI:0000:18:00): 45, caused by previous Xid 149");
	assert_int_equal(ng_xid_attach(s, &e, 1), 0);
	assert_int_equal(s->gpu[0].xid[0].code, 45);
	assert_int_equal(s->gpu[0].xid[0].cause, 149);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_driver_formats),
		cmocka_unit_test(test_logger_prefixes),
		cmocka_unit_test(test_not_xids),
		cmocka_unit_test(test_hostile_lines),
		cmocka_unit_test(test_scan),
		cmocka_unit_test(test_fallen_off_the_bus_without_xid),
		cmocka_unit_test(test_attach),
		cmocka_unit_test(test_caused_by),
		cmocka_unit_test(test_fixtures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
