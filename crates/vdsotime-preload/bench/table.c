/* Markdown tables for bench.c; see table.h. */
#include "table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void grow(struct table *t)
{
	t->cells = realloc(t->cells, (size_t)(t->rows + 1) * sizeof *t->cells);
	if (!t->cells) {
		perror("bench");
		exit(1);
	}
	memset(t->cells[t->rows], 0, sizeof *t->cells);
}

void table_init(struct table *t, int cols, const char *const *head)
{
	t->cols = cols < TABLE_MAX_COLS ? cols : TABLE_MAX_COLS;
	t->rows = 0;
	t->cells = NULL;
	grow(t);
	for (int c = 0; c < t->cols; c++)
		snprintf(t->cells[0][c], TABLE_CELL, "%s", head[c]);
}

void table_add(struct table *t, const char (*cells)[TABLE_CELL])
{
	t->rows++;
	grow(t);
	for (int c = 0; c < t->cols; c++)
		snprintf(t->cells[t->rows][c], TABLE_CELL, "%s", cells[c]);
}

void table_print(const struct table *t)
{
	int width[TABLE_MAX_COLS] = {0};
	for (int r = 0; r <= t->rows; r++)
		for (int c = 0; c < t->cols; c++) {
			int w = (int)strlen(t->cells[r][c]);
			width[c] = w > width[c] ? w : width[c];
		}
	for (int r = 0; r <= t->rows; r++) {
		for (int c = 0; c < t->cols; c++)
			printf(c == 0 ? "| %-*s " : "| %*s ", width[c], t->cells[r][c]);
		printf("|\n");
		if (r == 0) {
			for (int c = 0; c < t->cols; c++) {
				printf("|");
				for (int i = 0; i < width[c] + 2; i++)
					putchar('-');
			}
			printf("|\n");
		}
	}
}

void format_ns(char *out, double ns)
{
	snprintf(out, TABLE_CELL, ns < 10 ? "%.2f" : ns < 100 ? "%.1f" : "%.0f", ns);
}

/* A ratio precise enough to tell 1.004 from 1.012: three decimals below 10, one above. */
static void format_ratio(char out[16], double v)
{
	snprintf(out, 16, v < 10 ? "%.3f" : "%.1f", v);
}

void format_spread(char *out, double median, double q1, double q3)
{
	char m[16], a[16], b[16];
	format_ratio(m, median);
	format_ratio(a, q1);
	format_ratio(b, q3);
	snprintf(out, TABLE_CELL, "%s [%s-%s]", m, a, b);
}
