/* Which jobs `admit --prolog` screens (judge/prolog_ask.h). */
#include "judge/prolog_ask.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where " KEY=" (or KEY= at the start of a line) begins its value. */
static const char *value_at(const char *text, const char *key)
{
	size_t k = strlen(key);
	for (const char *p = text; (p = strstr(p, key)) != NULL; p += k)
		if (p == text || p[-1] == ' ' || p[-1] == '\n')
			return p + k;
	return NULL;
}

/* A word value: up to the next blank. */
static void word_of(const char *text, const char *key, char *out, size_t len)
{
	const char *v = value_at(text, key);
	size_t n = v ? strcspn(v, " \n") : 0;
	if (n >= len)
		n = len - 1;
	memcpy(out, v ? v : "", n);
	out[n] = '\0';
	if (strcmp(out, "(null)") == 0)
		out[0] = '\0';
}

/* Comment= may hold blanks: it ends at the line's end, or where the next
 * " Key=" (a capital, then letters, then '=') begins. */
static void comment_of(const char *text, char *out, size_t len)
{
	const char *v = value_at(text, "Comment=");
	size_t n = 0;
	if (v) {
		size_t line = strcspn(v, "\n");
		for (n = 0; n < line; n++) {
			if (v[n] != ' ' || !isupper((unsigned char)v[n + 1]))
				continue;
			size_t k = n + 1;
			while (k < line && isalpha((unsigned char)v[k]))
				k++;
			if (k < line && v[k] == '=')
				break;
		}
	}
	if (n >= len)
		n = len - 1;
	memcpy(out, v ? v : "", n);
	out[n] = '\0';
	if (strcmp(out, "(null)") == 0)
		out[0] = '\0';
}

int ng_prolog_job_parse(const char *text, ng_prolog_job *out)
{
	memset(out, 0, sizeof *out);
	if (!text || !value_at(text, "JobId="))
		return -1;
	char n[32];
	word_of(text, "NumNodes=", n, sizeof n);
	/* "4" or "4-8" (a range before it starts): the least it will get. */
	char *end;
	long v = strtol(n, &end, 10);
	out->num_nodes = end != n && v > 0 ? v : 0;
	word_of(text, "Features=", out->features, sizeof out->features);
	comment_of(text, out->comment, sizeof out->comment);
	return 0;
}

/* Whether a constraint expression ("a&b|[c|d]*2", "(x&y)") names the feature. */
static bool names_feature(const char *expr, const char *feature)
{
	size_t n = strlen(feature);
	for (const char *p = expr; *p;) {
		size_t len = strcspn(p, "&|,()[]*: ");
		if (len == n && strncmp(p, feature, n) == 0)
			return true;
		p += len ? len : 1;
	}
	return false;
}

/* Whether the comment holds the word, delimited by blanks, commas or the ends. */
static bool holds_word(const char *text, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = text; n && (p = strstr(p, word)) != NULL; p++) {
		bool start = p == text || p[-1] == ' ' || p[-1] == ',';
		bool end = p[n] == '\0' || p[n] == ' ' || p[n] == ',';
		if (start && end)
			return true;
	}
	return false;
}

bool ng_prolog_job_asks(const ng_policy *pol, const ng_prolog_job *job, char *why, size_t len)
{
	if (pol->prolog_min_nodes > 0 && job->num_nodes >= pol->prolog_min_nodes) {
		snprintf(why, len, "%ld nodes, at least admission.prolog_min_nodes %ld", job->num_nodes,
		         pol->prolog_min_nodes);
		return true;
	}
	if (pol->prolog_feature[0] && names_feature(job->features, pol->prolog_feature)) {
		snprintf(why, len, "its constraint names %s (admission.prolog_feature)",
		         pol->prolog_feature);
		return true;
	}
	if (pol->prolog_comment[0] && holds_word(job->comment, pol->prolog_comment)) {
		snprintf(why, len, "its comment holds %s (admission.prolog_comment)", pol->prolog_comment);
		return true;
	}
	snprintf(why, len, "%ld node%s, no %s constraint, no %s comment: not asked", job->num_nodes,
	         job->num_nodes == 1 ? "" : "s", pol->prolog_feature, pol->prolog_comment);
	return false;
}
