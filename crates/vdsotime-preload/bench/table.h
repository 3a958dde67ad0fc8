/* Markdown tables padded like the Rust tool's (comfy-table's ASCII_MARKDOWN preset): the first
 * column left-aligned, the others right-aligned, so both tools' output pastes into the README. */
#ifndef VDSOTIME_BENCH_TABLE_H
#define VDSOTIME_BENCH_TABLE_H

#define TABLE_CELL 64
#define TABLE_MAX_COLS 8

struct table {
	int cols, rows;
	char (*cells)[TABLE_MAX_COLS][TABLE_CELL]; /* rows + 1 (the header first) */
};

/* A table with `cols` columns named by `head`. */
void table_init(struct table *t, int cols, const char *const *head);
/* Appends a row of `cols` cells, each TABLE_CELL bytes, consecutive. */
void table_add(struct table *t, const char (*cells)[TABLE_CELL]);
/* Prints the table to stdout. */
void table_print(const struct table *t);
/* ns with precision to suit: 2.41, 23.1, 231. */
void format_ns(char *out, double ns);
/* A median ratio and its quartiles: 1.004 [0.998-1.011]; 45.3 [44.0-47.0] from 10 up. */
void format_spread(char *out, double median, double q1, double q3);

#endif
