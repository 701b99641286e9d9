/* The documents of the fabric flows as text (fabric.h). */
#include <math.h>
#include <stdio.h>

#include "cli/fabric.h"
#include "core/json.h"

void fabric_print_gang(const cJSON *doc)
{
	const cJSON *tests = ng_json_get(doc, "tests");
	printf("gang of %g nodes, %g rounds, %g tests\n", ng_json_get(doc, "nodes_n")->valuedouble,
	       ng_json_get(doc, "rounds")->valuedouble, (double)cJSON_GetArraySize(tests));
	for (const cJSON *t = tests->child; t; t = t->next) {
		const cJSON *nodes = ng_json_get(t, "nodes"), *bw = ng_json_get(t, "busbw");
		const cJSON *why = ng_json_get(t, "reason");
		const cJSON *ch = ng_json_get(t, "changed"), *hca = ng_json_get(t, "hca");
		printf("  %-7s round %g  %-13s %3d nodes  %8.2f GB/s  %s%s%s\n",
		       cJSON_IsString(hca) ? hca->valuestring : "all", ng_json_get(t, "round")->valuedouble,
		       ng_json_get(t, "verdict")->valuestring, cJSON_GetArraySize(nodes),
		       cJSON_IsNumber(bw) ? bw->valuedouble : NAN, cJSON_IsString(ch) ? ch->valuestring : "",
		       cJSON_IsString(why) ? ": " : "", cJSON_IsString(why) ? why->valuestring : "");
		for (const cJSON *c = ng_json_get(t, "ports_changed")->child; c; c = c->next)
			printf("           %s %s port %g: %s %s\n", ng_json_get(c, "node")->valuestring,
			       ng_json_get(c, "hca")->valuestring, ng_json_get(c, "port")->valuedouble,
			       cJSON_IsString(ng_json_get(c, "counter")) ? "counter rose:" : "changed:",
			       cJSON_IsString(ng_json_get(c, "counter")) ? ng_json_get(c, "counter")->valuestring
			                                                  : ng_json_get(c, "change")->valuestring);
	}
	printf("NODE                 VERDICT\n");
	for (const cJSON *n = ng_json_get(doc, "verdicts")->child; n; n = n->next) {
		const cJSON *why = ng_json_get(n, "reason");
		printf("%-20s %s%s%s\n", ng_json_get(n, "node")->valuestring, ng_json_get(n, "verdict")->valuestring,
		       cJSON_IsString(why) ? "  " : "", cJSON_IsString(why) ? why->valuestring : "");
		for (const cJSON *r = ng_json_get(n, "slow_rails")->child; r; r = r->next)
			printf("%-20s   slow rail %s\n", "", r->valuestring);
	}
	for (const cJSON *u = ng_json_get(doc, "unattributed")->child; u; u = u->next)
		printf("test %g failed while both its halves passed: the path between them (or no\n"
		       "baseline for the whole), not a node\n", u->valuedouble);
	const cJSON *fd = ng_json_get(doc, "fault_domain");
	if (fd) {
		const cJSON *sw = ng_json_get(fd, "switch");
		printf("switch domain%s%s: %s\n", cJSON_IsString(sw) ? " " : "",
		       cJSON_IsString(sw) ? sw->valuestring : "s", ng_json_get(fd, "why")->valuestring);
	}
	for (const cJSON *p = ng_json_get(doc, "unattributed_paths") ? ng_json_get(doc, "unattributed_paths")->child
	                                                               : NULL; p; p = p->next)
		printf("test %g: %s\n", ng_json_get(p, "test")->valuedouble, ng_json_get(p, "why")->valuestring);
	printf("nodegate overhead %.2f s beyond the tests (%.2f s in all)\n",
	       ng_json_get(doc, "overhead_s")->valuedouble, ng_json_get(doc, "wall_s")->valuedouble);
}

void fabric_print_pair(const cJSON *doc)
{
	const char *cand = ng_json_get(doc, "candidate")->valuestring;
	const char *verdict = ng_json_get(doc, "verdict")->valuestring;
	const char *bname = ng_json_get(doc, "blame")->valuestring;
	const char *because = ng_json_get(doc, "because")->valuestring;
	const cJSON *tests = ng_json_get(doc, "tests"), *rail_blame = ng_json_get(doc, "slow_rails");
	const cJSON *sw = ng_json_get(doc, "switches");
	printf("candidate %s, peers", cand);
	for (const cJSON *p = ng_json_get(doc, "peers")->child; p; p = p->next)
		printf(" %s", p->valuestring);
	printf("\nverdict   %s (blame: %s: %s)\n", verdict, bname, because);
	for (const cJSON *t = tests->child; t; t = t->next) {
		const cJSON *bw = ng_json_get(t, "busbw"), *g = ng_json_get(t, "gbps");
		const cJSON *v = ng_json_get(t, "verdict"), *rs = ng_json_get(t, "reason");
		printf("  %-12s %-8s %-14s %8.2f %s  changed %s%s%s\n", ng_json_get(t, "test")->valuestring,
		       cJSON_IsString(ng_json_get(t, "hca")) ? ng_json_get(t, "hca")->valuestring : "all",
		       cJSON_IsString(v) ? v->valuestring : "-",
		       cJSON_IsNumber(bw) ? bw->valuedouble : cJSON_IsNumber(g) ? g->valuedouble : NAN,
		       cJSON_IsNumber(bw) ? "GB/s" : "Gb/s", ng_json_get(t, "changed")->valuestring,
		       cJSON_IsString(rs) ? ": " : "", cJSON_IsString(rs) ? rs->valuestring : "");
		for (const cJSON *ch = ng_json_get(t, "ports_changed")->child; ch; ch = ch->next)
			if (cJSON_IsString(ng_json_get(ch, "counter")))
				printf("      counter rose: %s %s %s\n", ng_json_get(ch, "node")->valuestring,
				       ng_json_get(ch, "hca")->valuestring, ng_json_get(ch, "counter")->valuestring);
	}
	for (const cJSON *r = rail_blame->child; r; r = r->next)
		printf("slow rail %s: %s\n", ng_json_get(r, "hca")->valuestring, ng_json_get(r, "blame")->valuestring);
	for (const cJSON *s = sw ? sw->child : NULL; s; s = s->next)
		printf("switch    %s: %s\n", s->string, s->valuestring);
}
