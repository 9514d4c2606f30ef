/* `dtbprobe verify`: checks textbook claims (probe/claims.h) against the tables and reports
 * them as text, JSON or an HTML page with board diagrams. Part of the dtbprobe command line. */
#ifndef DTB_CLI_VERIFY_H
#define DTB_CLI_VERIFY_H

/* One line for dtbprobe's list of commands. */
#define DTBPROBE_VERIFY_SYNOPSIS "[--tables DIR] [--examples K] [--json] [--html FILE] [--notation N] [--skip-absent] [FILE ...]"

/* Runs the command on the words after "verify" (argv[0] is the first of them). Returns the exit
 * status: 0 every claim holds, 1 a claim fails, a table is missing or an input cannot be read,
 * 2 usage. Prints (stdout: the report; stderr: problems, and progress on a terminal). */
int dtbprobe_verify_main(int argc, char **argv);

#endif
