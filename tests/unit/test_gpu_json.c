/* The GPU snapshot as JSON: every field state and every value round-trips
 * exactly, input is read strictly (the key at fault is named), and PCI
 * addresses in every spelling NVML, sysfs and the kernel use come out as one. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/gpu_fields.h"
#include "core/json.h"
#include "gpu_compare.h"

/* ---- ng_gpu_bus_normalize ------------------------------------------------------ */

static void test_bus_accepted(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{"00000000:3B:00.0", "0000:3b:00"}, /* NVML busId */
		{"0000:3B:00.0", "0000:3b:00"},     /* NVML busIdLegacy */
		{"0000:3b:00", "0000:3b:00"},       /* the kernel's Xid line, normalized */
		{"0000:3b:00.0", "0000:3b:00"},     /* sysfs */
		{"PCI:0000:3B:00", "0000:3b:00"},   /* the kernel's Xid line as printed */
		{"PCI:0000:3b:00", "0000:3b:00"},
		{"pci:0000:3b:00", "0000:3b:00"},
		{"3b:00.0", "0000:3b:00"},          /* lspci without a domain */
		{"00000000:DB:1F.7", "0000:db:1f"},
		{"00000001:18:00.0", "0001:18:00"},
		{"00010000:E1:00.0", "10000:e1:00"}, /* a VMD domain, as the kernel prints it */
		{"10000:e1:00", "10000:e1:00"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char out[16];
		memset(out, 'x', sizeof out);
		if (ng_gpu_bus_normalize(cases[i][0], out) != 0)
			fail_msg("refused \"%s\"", cases[i][0]);
		assert_string_equal(out, cases[i][1]);
	}
}

static void test_bus_refused(void **state)
{
	(void)state;
	static const char *const cases[] = {
		"", "3b:00", "3b", "0:3b:00", "000:3b:00", "000000000:3b:00.0", "0000:3b:0", "0000:3b:000",
		"0000:3:00", "0000:3b:20", "0000:3b:00.8", "0000:3b:00.", "0000:3b:00.00", "0000:3b:00.0 ",
		" 0000:3b:00", "PCI:3b:00.0", "PCI:", "0000:zz:00", "0000:3b:00:00", "0000::00",
		"GPU-5c4a1f0e-7a2b-4c1d-9e3f-0a1b2c3d4e5f", "0000-3b-00", "0x0000:3b:00", "+000:3b:00",
		"PCI:0000:3b:00)", "12:34",
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char out[16] = "";
		if (ng_gpu_bus_normalize(cases[i], out) == 0)
			fail_msg("accepted \"%s\" as %s", cases[i], out);
	}
	char out[16];
	assert_int_equal(ng_gpu_bus_normalize(NULL, out), -1);
}

/* The hand-written form is printf's, at every width the parts can take. */
static void test_bus_format(void **state)
{
	(void)state;
	static const unsigned long domains[] = {0, 1, 0xf, 0x10, 0xfff, 0x1000, 0xffff, 0x10000, 0xabcdef,
	                                        0xffffffffUL, 0x1ffffffffUL, 0x123456789abcUL};
	for (size_t d = 0; d < sizeof domains / sizeof *domains; d++)
		for (unsigned long bus = 0; bus <= 0x1ff; bus += 0x0f)
			for (unsigned long dev = 0; dev <= 0x11f; dev += 0x07) {
				char want[32], got[16];
				snprintf(want, sizeof want, "%04lx:%02lx:%02lx", domains[d] & 0xffffffffUL,
				         bus & 0xffUL, dev & 0xffUL);
				memset(got, 'x', sizeof got);
				ng_gpu_bus_format(domains[d], bus, dev, got);
				assert_string_equal(got, want);
			}
}

/* ---- round trip ---------------------------------------------------------------- */

static void ok(ng_gpu_field *f, uint64_t v) { *f = (ng_gpu_field){.state = NG_FIELD_OK, .value = v}; }

/* A snapshot using every form a field can take. */
static void sample(ng_gpu_snapshot *s)
{
	memset(s, 0, sizeof *s);
	snprintf(s->source, sizeof s->source, "nvml");
	s->nvml = NG_FIELD_OK;
	snprintf(s->nvml_error, sizeof s->nvml_error, "libnvidia-ml lacks nvmlDeviceGetRemappedRows");
	snprintf(s->driver, sizeof s->driver, "550.54.15");
	snprintf(s->nvml_version, sizeof s->nvml_version, "12.550.54.15");
	s->n_gpus = 3;
	for (int i = 0; i < 3; i++) {
		ng_gpu_state *g = &s->gpu[i];
		g->index = i;
		snprintf(g->uuid, sizeof g->uuid, "GPU-5c4a1f0e-7a2b-4c1d-9e3f-0a1b2c3d4e5%d", i);
		snprintf(g->name, sizeof g->name, "NVIDIA H100 80GB HBM3 \"q\" \\ \xc3\xa9");
		snprintf(g->bus, sizeof g->bus, "0000:%02x:00", 0x18 + i);
		uint64_t v = 1;
#define OK_FIELD(m) ok(&g->m, v++ * (uint64_t)(i + 1));
		NG_GPU_FIELDS(OK_FIELD)
#undef OK_FIELD
	}
	ng_gpu_state *g = &s->gpu[0];
	ok(&g->ecc_volatile_uncorrected, 0);
	ok(&g->ecc_aggregate_uncorrected, UINT64_MAX);          /* past 2^53 */
	ok(&g->ecc_aggregate_corrected, ((uint64_t)1 << 53) + 1); /* just past it */
	ok(&g->ecc_volatile_corrected, (uint64_t)1 << 53);
	g->remap_corrected = (ng_gpu_field){.state = NG_FIELD_NOT_SUPPORTED, .nvml_return = 3};
	g->remap_failed = (ng_gpu_field){.state = NG_FIELD_FAILED, .nvml_return = 999};
	g->remap_pending = (ng_gpu_field){.state = NG_FIELD_UNREAD};
	g->pcie_replays = (ng_gpu_field){.state = NG_FIELD_FAILED, .value = 7, .nvml_return = 15}; /* full form */
	g->pcie_gen = (ng_gpu_field){.state = NG_FIELD_OK, .value = 4, .nvml_return = 7};       /* full form */
	g->power_mw = (ng_gpu_field){.state = NG_FIELD_UNREAD, .nvml_return = 13};              /* full form */
	g->temperature_c = (ng_gpu_field){.state = NG_FIELD_FAILED, .nvml_return = -5};
	g->n_links = NG_NVLINK_MAX;
	for (size_t l = 0; l < g->n_links; l++) {
		ok(&g->link[l].active, l != 3);
		ok(&g->link[l].replay_errors, l);
		ok(&g->link[l].recovery_errors, 2 * l);
		g->link[l].crc_errors = (ng_gpu_field){.state = NG_FIELD_NOT_SUPPORTED, .nvml_return = 3};
	}
	g->n_xid = 2;
	g->xid[0] = (ng_gpu_xid){.code = 79, .at_usec = -1};
	snprintf(g->xid[0].message, sizeof g->xid[0].message, "GPU has fallen off the bus.");
	g->xid[1] = (ng_gpu_xid){.code = 48, .at_usec = INT64_MAX};
	s->gpu[1].lost = true;
	snprintf(s->gpu[1].error, sizeof s->gpu[1].error, "GPU is lost: nvmlDeviceGetUUID returned GPU_IS_LOST");
	memset(s->gpu[1].uuid, 0, sizeof s->gpu[1].uuid);
	memset(s->gpu[1].bus, 0, sizeof s->gpu[1].bus);
	s->gpu[2].index = 7;
	s->gpu[2].n_links = 1;
	s->gpu[2].link[0].active = (ng_gpu_field){.state = NG_FIELD_FAILED, .nvml_return = 13};
	s->gpu[2].xid[0].at_usec = -((int64_t)1 << 60);
	s->gpu[2].n_xid = 1;
}

static void assert_same(const ng_gpu_snapshot *a, const ng_gpu_snapshot *b)
{
	assert_same_snapshot(a, b, "round trip");
}

/* to JSON, to text, parsed again, back to a snapshot. */
static void round_trip_text(const ng_gpu_snapshot *s, ng_gpu_snapshot *back)
{
	cJSON *doc = ng_gpu_snapshot_to_json(s);
	assert_non_null(doc);
	char *text = cJSON_PrintUnformatted(doc);
	assert_non_null(text);
	cJSON_Delete(doc);
	ng_err err = {0};
	cJSON *again = ng_json_parse(text, strlen(text), &err);
	if (!again)
		fail_msg("the writer's text does not parse: %s: %.300s", err.msg, text);
	if (ng_gpu_snapshot_from_json(again, back, &err) != 0)
		fail_msg("the writer's text is refused: %s", err.msg);
	cJSON_Delete(again);
	free(text);
}

static void test_round_trip(void **state)
{
	(void)state;
	static ng_gpu_snapshot s, back;
	sample(&s);
	round_trip_text(&s, &back);
	assert_same(&s, &back);

	/* the tree itself, unprinted (big counters are raw items there) */
	cJSON *doc = ng_gpu_snapshot_to_json(&s);
	ng_err err = {0};
	memset(&back, 0xa5, sizeof back);
	if (ng_gpu_snapshot_from_json(doc, &back, &err) != 0)
		fail_msg("%s", err.msg);
	cJSON_Delete(doc);
	assert_same(&s, &back);

	/* a failed snapshot */
	memset(&s, 0, sizeof s);
	s.nvml = NG_FIELD_FAILED;
	snprintf(s.nvml_error, sizeof s.nvml_error, "nvmlInit_v2 failed: DRIVER_NOT_LOADED");
	snprintf(s.source, sizeof s.source, "synthetic");
	round_trip_text(&s, &back);
	assert_same(&s, &back);

	/* a full one */
	memset(&s, 0, sizeof s);
	s.nvml = NG_FIELD_OK;
	s.n_gpus = NG_GPU_MAX;
	for (int i = 0; i < NG_GPU_MAX; i++) {
		s.gpu[i].index = i;
		s.gpu[i].n_links = NG_NVLINK_MAX;
		s.gpu[i].n_xid = NG_GPU_XID_MAX;
		memset(s.gpu[i].uuid, 'u', sizeof s.gpu[i].uuid - 1);
		memset(s.gpu[i].xid[0].message, 'm', sizeof s.gpu[i].xid[0].message - 1);
		memset(s.gpu[i].error, 'e', sizeof s.gpu[i].error - 1);
	}
	memset(s.nvml_error, 'n', sizeof s.nvml_error - 1);
	round_trip_text(&s, &back);
	assert_same(&s, &back);
}

static void test_compact_form(void **state)
{
	(void)state;
	static ng_gpu_snapshot s;
	sample(&s);
	s.n_gpus = 1;
	cJSON *doc = ng_gpu_snapshot_to_json(&s);
	assert_non_null(doc);
	char *text = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	/* an OK field is its value; not supported and failed carry NVML's code */
	assert_non_null(strstr(text, "\"schema\":\"nodegate/gpus/1\""));
	assert_non_null(strstr(text, "\"ecc_volatile_uncorrected\":0,"));
	assert_non_null(strstr(text, "\"ecc_aggregate_uncorrected\":18446744073709551615,"));
	assert_non_null(strstr(text, "\"remap_corrected\":{\"not_supported\":3}"));
	assert_non_null(strstr(text, "\"remap_failed\":{\"failed\":999}"));
	assert_null(strstr(text, "\"remap_pending\""));
	assert_non_null(strstr(text, "\"pcie_replays\":{\"state\":\"failed\",\"value\":7,\"nvml_return\":15}"));
	assert_non_null(strstr(text, "\"nvml\":\"ok\""));
	assert_non_null(strstr(text, "\"ecc_volatile_corrected\":9007199254740992,"));
	assert_non_null(strstr(text, "\"ecc_aggregate_corrected\":9007199254740993,"));
	free(text);

	/* the largest counter cJSON prints exactly, and the first it does not */
	memset(&s, 0, sizeof s);
	s.nvml = NG_FIELD_OK;
	s.n_gpus = 1;
	ok(&s.gpu[0].pcie_replays, 999999999999999);
	ok(&s.gpu[0].power_mw, 1000000000000001);
	static ng_gpu_snapshot back;
	doc = ng_gpu_snapshot_to_json(&s);
	text = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	assert_non_null(strstr(text, "\"pcie_replays\":999999999999999,"));
	assert_non_null(strstr(text, "\"power_mw\":1000000000000001,"));
	ng_err err = {0};
	doc = ng_json_parse(text, strlen(text), &err);
	free(text);
	assert_int_equal(ng_gpu_snapshot_from_json(doc, &back, &err), 0);
	cJSON_Delete(doc);
	assert_same(&s, &back);
}

static void test_to_json_refuses_nonsense(void **state)
{
	(void)state;
	static ng_gpu_snapshot s;
	sample(&s);
	s.n_gpus = NG_GPU_MAX + 1;
	assert_null(ng_gpu_snapshot_to_json(&s));
	sample(&s);
	s.gpu[1].n_links = NG_NVLINK_MAX + 1;
	assert_null(ng_gpu_snapshot_to_json(&s));
	sample(&s);
	s.gpu[0].pcie_gen.state = (ng_field_state)9;
	assert_null(ng_gpu_snapshot_to_json(&s));
	assert_null(ng_gpu_snapshot_to_json(NULL));
}

/* ---- reading ------------------------------------------------------------------- */

static int read_text(const char *text, ng_gpu_snapshot *out, ng_err *err)
{
	cJSON *doc = ng_json_parse(text, strlen(text), err);
	if (!doc)
		fail_msg("test input does not parse: %s: %s", err->msg, text);
	int rc = ng_gpu_snapshot_from_json(doc, out, err);
	cJSON_Delete(doc);
	return rc;
}

static void test_hand_written(void **state)
{
	(void)state;
	static ng_gpu_snapshot s;
	ng_err err = {0};
	const char *text =
		"{\"schema\": \"nodegate/gpus/1\", \"nvml\": \"ok\", \"gpus\": ["
		" {\"index\": 0, \"bus\": \"00000000:3B:00.0\", \"pcie_width\": 8, \"pcie_width_max\": 16,"
		"  \"remap_failed\": null, \"pcie_gen\": {\"state\": \"ok\", \"value\": 5},"
		"  \"ecc_volatile_uncorrected\": 1e1, \"power_mw\": 70000.0,"
		"  \"nvlink\": [{\"active\": {\"failed\": 999}}], \"xid\": [{\"code\": 79}]},"
		" {\"index\": 3, \"bus\": \"PCI:0000:3c:00\", \"lost\": true}]}";
	if (read_text(text, &s, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(s.nvml, NG_FIELD_OK);
	assert_string_equal(s.source, "");
	assert_int_equal(s.n_gpus, 2);
	assert_string_equal(s.gpu[0].bus, "0000:3b:00");
	assert_string_equal(s.gpu[1].bus, "0000:3c:00");
	assert_int_equal(s.gpu[0].pcie_width.state, NG_FIELD_OK);
	assert_int_equal(s.gpu[0].pcie_width.value, 8);
	assert_int_equal(s.gpu[0].pcie_gen.value, 5);
	assert_int_equal(s.gpu[0].ecc_volatile_uncorrected.value, 10);
	assert_int_equal(s.gpu[0].power_mw.value, 70000);
	assert_int_equal(s.gpu[0].remap_failed.state, NG_FIELD_UNREAD);
	assert_int_equal(s.gpu[0].ecc_aggregate_uncorrected.state, NG_FIELD_UNREAD);
	assert_int_equal(s.gpu[0].n_links, 1);
	assert_int_equal(s.gpu[0].link[0].active.state, NG_FIELD_FAILED);
	assert_int_equal(s.gpu[0].link[0].active.nvml_return, 999);
	assert_int_equal(s.gpu[0].link[0].crc_errors.state, NG_FIELD_UNREAD);
	assert_int_equal(s.gpu[0].n_xid, 1);
	assert_int_equal(s.gpu[0].xid[0].at_usec, -1);
	assert_int_equal(s.gpu[1].index, 3);
	assert_true(s.gpu[1].lost);
}

static void must_refuse(const char *text, const char *msg_part)
{
	static ng_gpu_snapshot s;
	ng_err err = {0};
	if (read_text(text, &s, &err) == 0)
		fail_msg("accepted: %s", text);
	if (!strstr(err.msg, msg_part))
		fail_msg("error \"%s\" does not say \"%s\" (input %s)", err.msg, msg_part, text);
	/* nothing half-read is left behind */
	assert_int_equal(s.n_gpus, 0);
	assert_int_equal(s.nvml, NG_FIELD_UNREAD);
}

#define HEAD "{\"schema\": \"nodegate/gpus/1\", \"nvml\": \"ok\", "

static void test_strict(void **state)
{
	(void)state;
	must_refuse("[]", "expected an object");
	must_refuse("{\"nvml\": \"ok\", \"gpus\": []}", "schema");
	must_refuse("{\"schema\": \"nodegate/gpus/2\", \"nvml\": \"ok\", \"gpus\": []}", "schema");
	must_refuse("{\"schema\": \"nodegate/gpus/1\", \"gpus\": []}", "\"nvml\" is missing");
	must_refuse(HEAD "\"gpus\": [], \"extra\": 1}", "unknown key \"extra\"");
	must_refuse(HEAD "\"gpus\": [], \"gpus\": []}", "\"gpus\" given twice");
	must_refuse("{\"schema\": \"nodegate/gpus/1\", \"nvml\": \"fine\", \"gpus\": []}", "nvml: expected \"ok\"");
	must_refuse(HEAD "\"gpus\": {}}", "gpus: expected a list");
	must_refuse(HEAD "\"driver\": 550, \"gpus\": []}", "driver: expected a string");
	must_refuse("{\"schema\": \"nodegate/gpus/1\", \"nvml\": \"failed\", \"gpus\": [{\"index\": 0}]}",
	            "a failed snapshot holds none");
	must_refuse(HEAD "\"gpus\": [{}]}", "gpus[0]: \"index\" is missing");
	must_refuse(HEAD "\"gpus\": [{\"index\": -1}]}", "gpus[0].index");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0}, {\"index\": 1, \"ecc\": 0}]}", "gpus[1]: unknown key \"ecc\"");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"pcie_width\": \"16\"}]}", "gpus[0].pcie_width: expected");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"pcie_width\": -1}]}", "gpus[0].pcie_width");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"pcie_width\": 1.5}]}", "gpus[0].pcie_width");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"pcie_width\": true}]}", "gpus[0].pcie_width");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"pcie_width\": 18446744073709551616}]}", "gpus[0].pcie_width");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"pcie_width\": {\"failed\": 1, \"not_supported\": 3}}]}",
	            "gpus[0].pcie_width");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"pcie_width\": {\"failed\": \"UNKNOWN\"}}]}",
	            "gpus[0].pcie_width.failed");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"pcie_width\": {\"state\": \"fine\"}}]}",
	            "gpus[0].pcie_width.state");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"pcie_width\": {\"state\": \"ok\", \"why\": 1}}]}",
	            "gpus[0].pcie_width: unknown key \"why\"");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"pcie_width\": {\"state\": \"ok\", \"value\": -2}}]}",
	            "gpus[0].pcie_width.value");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"lost\": 1}]}", "gpus[0].lost");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"bus\": \"3b:00\"}]}", "gpus[0].bus");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"uuid\": \"GPU-00000000000000000000000000000000000000000000000"
	                 "0000000000000000000000000000000000000000000000000000000000\"}]}",
	            "gpus[0].uuid: longer than 95 bytes");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"nvlink\": [{\"active\": 1, \"speed\": 2}]}]}",
	            "gpus[0].nvlink[0]: unknown key \"speed\"");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"nvlink\": [{}, {\"crc_errors\": \"x\"}]}]}",
	            "gpus[0].nvlink[1].crc_errors");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"nvlink\": [{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},"
	                 "{},{},{}]}]}",
	            "gpus[0].nvlink: 19 entries; at most 18");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"xid\": [{\"message\": \"x\"}]}]}",
	            "gpus[0].xid[0]: \"code\" is missing");
	must_refuse(HEAD "\"gpus\": [{\"index\": 0, \"xid\": [{\"code\": 79, \"at_usec\": 0.5}]}]}",
	            "gpus[0].xid[0].at_usec");

	ng_err err = {0};
	static ng_gpu_snapshot s;
	assert_int_equal(ng_gpu_snapshot_from_json(NULL, &s, &err), -1);
	assert_int_equal(ng_gpu_snapshot_from_json(NULL, NULL, &err), -1);
}

/* ---- the child's bytes (core/gpu_wire.c) --------------------------------------- */

static ng_gpu_snapshot wire_a, wire_b;

static ng_strbuf packed(const ng_gpu_snapshot *s)
{
	ng_strbuf b = {0};
	assert_int_equal(ng_gpu_snapshot_pack(s, &b), 0);
	return b;
}

static void test_wire_round_trip(void **state)
{
	(void)state;
	sample(&wire_a);
	wire_a.gpu[2].presence = NG_GPU_MISSING;
	snprintf(wire_a.gpu[2].seen_by, sizeof wire_a.gpu[2].seen_by, "the kernel");
	wire_a.after_job = true;
	ng_strbuf b = packed(&wire_a);
	/* the GPUs it holds, not all NG_GPU_MAX of them */
	assert_true(b.len < sizeof wire_a / 16);
	memset(&wire_b, 0x5a, sizeof wire_b); /* whatever was there before */
	ng_err err = {0};
	if (ng_gpu_snapshot_unpack(b.s, b.len, &wire_b, &err) != 0)
		fail_msg("refused its own bytes: %s", err.msg);
	assert_same(&wire_a, &wire_b);
	assert_int_equal(wire_b.gpu[2].presence, NG_GPU_MISSING);
	assert_string_equal(wire_b.gpu[2].seen_by, "the kernel");
	assert_true(wire_b.after_job);
	assert_true(wire_b.gpu[1].lost);
	ng_strbuf_free(&b);

	/* a failed NVML, no GPUs */
	memset(&wire_a, 0, sizeof wire_a);
	wire_a.nvml = NG_FIELD_FAILED;
	snprintf(wire_a.nvml_error, sizeof wire_a.nvml_error, "nvmlInit_v2 failed: driver not loaded");
	b = packed(&wire_a);
	assert_int_equal(ng_gpu_snapshot_unpack(b.s, b.len, &wire_b, &err), 0);
	assert_same(&wire_a, &wire_b);
	ng_strbuf_free(&b);

	wire_a.n_gpus = NG_GPU_MAX + 1;
	b = (ng_strbuf){0};
	assert_int_equal(ng_gpu_snapshot_pack(&wire_a, &b), -1);
	ng_strbuf_free(&b);
}

/* Bytes that are not a snapshot this binary wrote, each refused whole. */
static void refuse_tampered(void (*tamper)(ng_gpu_snapshot *), const char *msg_part)
{
	sample(&wire_a);
	tamper(&wire_a);
	ng_strbuf b = {0};
	/* pack copies what it is given: the parent's checks are what count */
	wire_a.n_gpus = wire_a.n_gpus > NG_GPU_MAX ? NG_GPU_MAX : wire_a.n_gpus;
	assert_int_equal(ng_gpu_snapshot_pack(&wire_a, &b), 0);
	ng_err err = {0};
	if (ng_gpu_snapshot_unpack(b.s, b.len, &wire_b, &err) == 0)
		fail_msg("accepted a snapshot that should say \"%s\"", msg_part);
	if (!strstr(err.msg, msg_part))
		fail_msg("refused with \"%s\", not \"%s\"", err.msg, msg_part);
	assert_int_equal(wire_b.n_gpus, 0);
	ng_strbuf_free(&b);
}

static void bad_state(ng_gpu_snapshot *s) { s->gpu[1].pcie_width.state = (ng_field_state)9; }
static void bad_link_state(ng_gpu_snapshot *s) { s->gpu[0].link[17].crc_errors.state = (ng_field_state)4; }
static void bad_presence(ng_gpu_snapshot *s) { s->gpu[2].presence = (ng_gpu_presence)3; }
static void bad_bool(ng_gpu_snapshot *s) { memset(&s->gpu[0].lost, 2, 1); }
static void bad_uuid(ng_gpu_snapshot *s) { memset(s->gpu[2].uuid, 'A', sizeof s->gpu[2].uuid); }
static void bad_xid_text(ng_gpu_snapshot *s) { memset(s->gpu[0].xid[1].message, 'x', sizeof s->gpu[0].xid[1].message); }
static void bad_n_xid(ng_gpu_snapshot *s) { s->gpu[0].n_xid = NG_GPU_XID_MAX + 1; }
static void bad_n_links(ng_gpu_snapshot *s) { s->gpu[1].n_links = NG_NVLINK_MAX + 1; }
static void bad_n_pids(ng_gpu_snapshot *s) { s->gpu[1].n_pids = 9; }
static void bad_driver(ng_gpu_snapshot *s) { memset(s->driver, '5', sizeof s->driver); }
static void bad_nvml(ng_gpu_snapshot *s) { s->nvml = NG_FIELD_FAILED; }

static void test_wire_refuses(void **state)
{
	(void)state;
	refuse_tampered(bad_state, "GPU 1: a field's state is out of range");
	refuse_tampered(bad_link_state, "GPU 0: an NVLink field's state");
	refuse_tampered(bad_presence, "GPU 2: its presence");
	refuse_tampered(bad_bool, "GPU 0: \"lost\" is not a boolean");
	refuse_tampered(bad_uuid, "GPU 2: a string is not terminated");
	refuse_tampered(bad_xid_text, "GPU 0: an Xid's message");
	refuse_tampered(bad_n_xid, "GPU 0: more Xids");
	refuse_tampered(bad_n_links, "GPU 1: more NVLinks");
	refuse_tampered(bad_n_pids, "GPU 1: more processes");
	refuse_tampered(bad_driver, "a string is not terminated");
	refuse_tampered(bad_nvml, "NVML failed but it holds GPUs");

	sample(&wire_a);
	ng_strbuf b = packed(&wire_a);
	ng_err err = {0};
	/* cut, one byte long, no header, another magic, a count past the bytes */
	assert_int_equal(ng_gpu_snapshot_unpack(b.s, b.len - 1, &wire_b, &err), -1);
	assert_non_null(strstr(err.msg, "where its header says"));
	ng_strbuf_addc(&b, 0);
	assert_int_equal(ng_gpu_snapshot_unpack(b.s, b.len, &wire_b, &err), -1);
	b.len--;
	assert_int_equal(ng_gpu_snapshot_unpack(b.s, 10, &wire_b, &err), -1);
	assert_non_null(strstr(err.msg, "shorter than its header"));
	assert_int_equal(ng_gpu_snapshot_unpack(NULL, 0, &wire_b, &err), -1);
	b.s[0] ^= 1;
	assert_int_equal(ng_gpu_snapshot_unpack(b.s, b.len, &wire_b, &err), -1);
	assert_non_null(strstr(err.msg, "not one this nodegate wrote"));
	b.s[0] ^= 1;
	uint64_t many = NG_GPU_MAX + 1;
	memcpy(b.s + 16, &many, sizeof many);
	assert_int_equal(ng_gpu_snapshot_unpack(b.s, b.len, &wire_b, &err), -1);
	assert_non_null(strstr(err.msg, "more than"));
	uint64_t two = 2; /* the header disagrees with the snapshot's own count */
	memcpy(b.s + 16, &two, sizeof two);
	assert_int_equal(ng_gpu_snapshot_unpack(b.s, b.len - sizeof wire_a.gpu[0], &wire_b, &err), -1);
	assert_non_null(strstr(err.msg, "disagrees"));
	ng_strbuf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bus_accepted),
		cmocka_unit_test(test_bus_refused),
		cmocka_unit_test(test_bus_format),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_compact_form),
		cmocka_unit_test(test_to_json_refuses_nonsense),
		cmocka_unit_test(test_hand_written),
		cmocka_unit_test(test_strict),
		cmocka_unit_test(test_wire_round_trip),
		cmocka_unit_test(test_wire_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
